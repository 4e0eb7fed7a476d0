#!/usr/bin/env bash
# The README's "own configs" example, measured: allennlp-models' ESIM config (examples/esim_snli.jsonnet) trained
# as it is (LSTM encoders) and with both encoders swapped for lstmn, on the shipped SNLI sample, one after the other.
# Prints validation accuracy and training time of each.  Usage: bash benchmarks/own_config_example.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${1:-benchmarks/results/own_config_example}"
rm -rf "$OUT"
.venv/bin/allennlp train examples/esim_snli.jsonnet -s "$OUT/lstm" --include-package memplugins > "$OUT.lstm.log" 2>&1
.venv/bin/allennlp train examples/esim_snli.jsonnet -s "$OUT/lstmn" --include-package memplugins \
    -o '{"model.encoder.type": "lstmn", "model.inference_encoder.type": "lstmn"}' > "$OUT.lstmn.log" 2>&1
echo "| encoders | final training acc. (800 pairs) | best validation acc. (194 labelled pairs) | training time (5 epochs) |"
echo "|---|---:|---:|---:|"
for name in lstm lstmn; do
    .venv/bin/python - "$OUT/$name/metrics.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {m['training_accuracy']:.3f} | {m['best_validation_accuracy']:.3f} | {m['training_duration'].split('.')[0]} |")
PY
done
