"""Exception types raised by anachron.

All carry a message meant for the user: what failed, and what to change.
"""


class AnachronError(Exception):
    """Base class of every error anachron raises on purpose."""


class ConfigError(AnachronError):
    """A configuration problem (unknown key, wrong type, missing env var, missing model file).

    The message names the offending config key or environment variable.
    """


class EndpointError(AnachronError):
    """A model endpoint that does not answer, rejects the key, or failed too many calls of a run.

    The message names the model, the environment variable holding the endpoint's base URL and the
    URL's ``scheme://host:port`` (never credentials, path or query), and what to do next.
    """
