#!/usr/bin/env bash
# The README's training command: bootstraps .venv/ if needed, then trains CONFIG (default: the README's default
# model) on the data this repository ships, and prints where the archive is and how to run `allennlp predict`.
#   scripts/train.sh [CONFIG] [SERIALIZATION_DIR] [extra `allennlp train` arguments...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
CONFIG="${1:-training_config/snli_mma_nse.jsonnet}"
OUT="${2:-runs/$(basename "$CONFIG" .jsonnet)-$(date +%Y%m%d-%H%M%S)}"
shift $(( $# > 2 ? 2 : $# ))
allennlp train "$CONFIG" -s "$OUT" --include-package memplugins "$@"
cat <<MSG

[memplugins] model archive: $OUT/model.tar.gz
[memplugins] predict with:
    .venv/bin/allennlp predict $OUT/model.tar.gz fixtures/snli/predict_sample.jsonl --include-package memplugins
MSG
