from memplugins.readers.errors import MalformedInputError
from memplugins.readers.snli_parsed import SnliParsedReader
from memplugins.readers.wikiqa import WikiQaReader
