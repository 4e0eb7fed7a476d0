#!/usr/bin/env bash
# Prepares, here (a machine with a package registry), everything a lent GPU machine needs for scripts/gpu_run_all.sh,
# so that the GPU's time goes to measuring:
#   .gpusite/site.tar.xz  our pinned stack for its Python 3.12, less what its image has (scripts/build_wheelhouse.py)
#   .gpudata/             the real data the GPU benchmarks read: SNLI dev, the GloVe 50d subset, SST train trees,
#                         PTB (the replicate phase's language models); SNLI test (its SNLI rows); SST dev and test
#                         trees (its SST rows);
#                         IWSLT14 valid and test (its IWSLT rows); WikiQA and GloVe's top-100k file (the
#                         wikiqa_mma_nse and IWSLT rows)
# Both folders are ignored by git; on the GPU machine they arrive as carried paths. The carry limit (64 MiB for
# everything a call carries, the working tree included) takes .gpusite (42 MB) with the benchmarks' data
# (.gpudata/snli, .gpudata/glove/glove.6B.50d.sst_snli-devtest.txt.gz, .gpudata/sst, .gpudata/ptb: 13 MB), not with
# the WikiQA row's 23 MB or the IWSLT and SST rows' 26 MB: those are a later call on the same warm machine, which
# finds the stack unpacked (scripts/gpu_run_all.sh, replicate).
#   scripts/gpu_prepare.sh [DATA]     DATA defaults to $MEMPLUGINS_DATA, then ../shared/data
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DATA="${1:-${MEMPLUGINS_DATA:-$ROOT/../shared/data}}"
PYTHON="${PYTHON:-python3}"
if [ ! -s .gpusite/site.tar.xz ]; then
  "$PYTHON" scripts/build_wheelhouse.py --python-version 3.12 --out .whl \
      --skip-present scripts/gpu_machine_packages.txt --site-archive .gpusite/site.tar.xz
fi
for file in snli/snli_1.0_dev.jsonl.gz snli/snli_1.0_test.jsonl.gz glove/glove.6B.50d.sst_snli-devtest.txt.gz sst/trees/train.txt \
    sst/trees/dev.txt sst/trees/test.txt ptb/ptb.train.txt ptb/ptb.valid.txt ptb/ptb.test.txt \
    iwslt14_de_en/valid.de-en.de iwslt14_de_en/valid.de-en.en iwslt14_de_en/test.de-en.de iwslt14_de_en/test.de-en.en \
    wikiqa/WikiQACorpus/WikiQA-train.txt wikiqa/WikiQACorpus/WikiQA-dev.tsv wikiqa/WikiQACorpus/WikiQA-test.tsv \
    glove/glove.6B.50d.top100k.txt.gz; do
  [ -s "$DATA/$file" ] || { echo "gpu_prepare: $DATA/$file is missing (set MEMPLUGINS_DATA)" >&2; exit 1; }
  mkdir -p ".gpudata/$(dirname "$file")"
  cp "$DATA/$file" ".gpudata/$file"
done
du -sh .gpusite .gpudata/*
