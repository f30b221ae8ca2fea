"""Front end of the compiler: getting a function's source and resolving its names (``source``),
rejecting unsupported syntax with the user's file and line (``fence``), and normalising to the
small IR the transforms consume (``normalise``). See DESIGN.md §5."""
