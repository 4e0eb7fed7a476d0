// Munkhdalai and Yu (2017) nse on SNLI; see snli_nse.libsonnet for data variables and settings.
(import 'snli_nse.libsonnet')(variant='nse')
