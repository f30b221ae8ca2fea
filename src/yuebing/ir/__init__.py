"""The normal form every front end produces and every transform consumes.

``nodes`` holds the IR (one operation per statement, structured control flow); ``primitives``
the functions the normaliser introduces and generated code calls (display builders, closure
cells, sequence checks). This package imports nothing else of yuebing's.
"""
