"""Program transforms over the IR: reverse mode, forward mode, optimisation and code generation.
See DESIGN.md §5 and §7."""
