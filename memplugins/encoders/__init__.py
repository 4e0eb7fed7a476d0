from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.encoders.nse import NseEncoder, NseOutput
