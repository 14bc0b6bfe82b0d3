"""Every name other code and documents rely on, defined once (re-exported from the domain modules)."""

from triton_sre.conventions.exported import *  # noqa: F403
