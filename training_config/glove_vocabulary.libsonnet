// The vocabulary of every config with GloVe vectors: the words of the training and validation data, and the first
// GLOVE_VOCABULARY words of GLOVE_PATH (GloVe files list the most frequent words first; -1: all of them; default
// 100000). Without the GloVe words, a test or user word that training and validation lack maps to @@UNKNOWN@@,
// whose row was drawn at random and is never trained (no training token maps to it): 986 of the 1,821 binary SST
// test sentences hold such a word, none of the dev sentences does, and test accuracy moved by up to 8.7 points
// with that random row alone (docs/research/sst.md, "SST test words"). With them, dev and test words are treated alike:
// each keeps its GloVe row, as the papers' GloVe-initialised vocabularies do. A word GloVe lacks too still maps to
// @@UNKNOWN@@, whose row zero_unknown_row.libsonnet sets to zero. Rows of words no training token
// reaches stay as GloVe has them while the table is fixed, or tuned but outside the optimizer's L2 (our SST
// configs); an L2 on a tuned table (sst_tree_lstm's AdaGrad) shrinks them as it shrinks every row.
{
  type: 'from_instances',
  pretrained_files: { tokens: std.extVar('GLOVE_PATH') },
  min_pretrained_embeddings: { tokens: std.parseInt(std.extVar('GLOVE_VOCABULARY')) },
}
