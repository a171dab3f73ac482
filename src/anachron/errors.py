"""Exception types raised by anachron.

All carry a message meant for the user: what failed, and what to change.
"""


class AnachronError(Exception):
    """Base class of every error anachron raises on purpose."""


class ConfigError(AnachronError):
    """A configuration problem (unknown key, wrong type, missing env var, missing model file).

    The message names the offending config key or environment variable.
    """
