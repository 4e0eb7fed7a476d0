from memplugins.readers.errors import MalformedInputError
from memplugins.readers.snli_parsed import SnliParsedReader
from memplugins.readers.wikiqa import WikiQaReader
from memplugins.readers.sst_trees import SstTreesReader, parse_sst_tree
from memplugins.readers.parallel_text import ParallelTextReader
