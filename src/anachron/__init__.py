"""anachron: measure and reduce temporal leakage when backtesting LLMs.

The package is pure (no Snakemake imports); ``workflow/scripts`` are thin glue
around it. See docs/index.md.
"""

__version__ = "0.1.0"
