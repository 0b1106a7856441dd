"""The package version. Its major part must equal the loaded library's."""

__version__ = "0.4.0"
