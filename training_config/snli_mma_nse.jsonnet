// Munkhdalai and Yu (2017) mma-nse on SNLI; see snli_nse.libsonnet for data variables and settings.
(import 'snli_nse.libsonnet')(variant='mma_nse')
