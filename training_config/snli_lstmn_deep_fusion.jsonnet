// LSTMN deep attention fusion (Cheng et al. 2016, section 4); see snli_lstmn.libsonnet for data and settings.
(import 'snli_lstmn.libsonnet')(fusion='deep')
