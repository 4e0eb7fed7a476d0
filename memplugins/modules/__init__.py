from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.rte_attention import LastOutputAttention, WordByWordAttention
from memplugins.modules.tape_attention import additive_tape_read
from memplugins.modules.lstmn import LstmnInterAttention, LstmnLayer
from memplugins.modules.memory import memory_read, memory_write
from memplugins.modules.factored_memory import FactoredMemory, WriteHistory, read_memories
from memplugins.modules.reversal import reverse_padded
