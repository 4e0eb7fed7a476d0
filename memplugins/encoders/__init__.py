from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.encoders.nse import NseEncoder, NseOutput
from memplugins.encoders.tree_lstm import TreeLstmEncoder, TreeLstmOutput
from memplugins.encoders.iram import IramEncoder, IramOutput
from memplugins.encoders.tree_rnn import TreeRnnEncoder
from memplugins.encoders.skip_lstm import SkipLstmEncoder
