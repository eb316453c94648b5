"""primaldual: executable primal-dual theory for the support-vector family."""
__version__ = "0.1.0"
