from memplugins.encoders.lstmn import LstmnEncoder
