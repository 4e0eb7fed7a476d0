"""Moved to `memplugins.archives`; this alias stays for one release (0.2) and will then be removed."""
from memplugins.archives import (ALLOW_IMPORT_PATHS_VARIABLE, ArchiveError, ArchiveLimits, apply,  # noqa: F401
                                 import_paths, load_archive, read_archive_config, safe_extract)
