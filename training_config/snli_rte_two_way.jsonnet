// Rocktäschel et al. (2016), section 2.5: word-by-word attention, two-way (the same weights also read the pair
// swapped; the two representations are concatenated), k = 100 (see snli_rte.libsonnet for data and settings).
(import 'snli_rte.libsonnet')(mode='word_by_word', two_way=true)
