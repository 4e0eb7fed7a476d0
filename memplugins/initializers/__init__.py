from memplugins.initializers.zero_unknown_row import ZeroUnknownRow, zero_unknown_row_in_archive  # noqa: F401
