#!/usr/bin/env bash
# Every GPU test and benchmark of issue 23, one phase per command (each fits a 10-minute lent-GPU call):
#   scripts/gpu_run_all.sh [setup] [check] [encoders] [tree] [throughput] [graphs] [workers] [families] [replicate]
#                          [nan] [races]
#   (none: all but setup, replicate, nan and races)
#     setup       nothing but unpacking the carried stack (.gpusite) into /tmp and importing it, for a later call
#                 on the same warm machine that carries data instead of the stack
#     check       versions and the device, then the requires_gpu tests of the fast paths, kernels and graphs
#     encoders    benchmarks/speed/encoders.py: float32, float16 and bfloat16 autocast at B=32 T=40 d=300; B=128; T=80;
#                 lstmn and nse with and without their Triton kernels, and as CUDA graphs (the "(graphs)" rows)
#     tree        benchmarks/speed/tree_lstm.py on SST train batches, d=300 and d=50, float32 and float16 autocast
#     throughput  benchmarks/speed/train_throughput.py --cuda-device 0 on the SNLI dev pairs, default settings (CUDA
#                 graphs on), AMP off and on, two epochs (the second reported), the data loader's own time beside
#                 each epoch: every config on AllenNLP's multiprocess loader, then on memplugins' tensorized one
#     graphs      our two configs and esim with MEMPLUGINS_CUDA_GRAPHS=1 set explicitly, with the captures counted
#     workers     the throughput phase's four configs with two data loader worker processes (how much the
#                 single-process data pipeline bounds each)
#     families    every model family trained on CUDA by `allennlp train` (too long for one call: FAMILIES_FILTER,
#                 a pytest -k expression over the config names, takes a part)
#     replicate   benchmarks/replication/replicate.py on cuda:0 with MEMPLUGINS_CUDA_GRAPHS=1 (issue 22's long rows), in lanes that
#                 share the GPU: $REPLICATE is ';'-separated lanes of "FAMILY ROW [ROW ...] [--seeds N ...]" (default:
#                 lanes that finish in the lease or whose unfinished checkpoints come back together within
#                 carry_runs.py's 60 MiB and finish on a CPU core within the same session (the session's machine
#                 and its runs folder do not outlive it): seed 7 of the binary NSE, `sst2_nse` (its 25 epochs
#                 need 11.5-13 minutes of lane time, 17-31 s an epoch beside two or three lanes on an H200, 3-4.7
#                 minutes on a CPU core; unfinished, 34.1 MiB with its best.th, since a binary run's best epoch is
#                 seldom its last), eighth seeds of the SNLI rows a CPU core is slowest at, ESIM and MMA-NSE at
#                 both batches (1.3-4 minutes each on an H200, 20-24 on a core), which finish and come back as
#                 replication.jsonl lines, and seed 4 of the fine-tuned k = 300 NSE trained as the peer is
#                 (`sst2_nse_tuned_embeddings_peer_training`, 260 s of lane time on 2026-11-29). `sst5_nse` (83-100
#                 s an epoch on an H200, 25 epochs) is no default lane: its remaining epochs take a CPU core 2-3
#                 hours, more than the rest of a session. Their data fits the first call's carry beside .gpusite
#                 (52 MiB with the tree), so a lease is two calls on one warm machine, the second made at once (the
#                 machine waits 30 s):
#                   run(command="export OUT=$OUT REPLICATE_MINUTES=7; scripts/gpu_run_all.sh replicate",
#                       carry=[".gpusite", ".gpudata/sst", ".gpudata/snli",
#                              ".gpudata/glove/glove.6B.50d.sst_snli-devtest.txt.gz"], timeout_s=540)
#                   run(command="export OUT=$OUT REPLICATE_MINUTES=5.5; scripts/gpu_run_all.sh replicate",
#                       timeout_s=385)
#                 (a slow start shortens the second call: size it from the first call's lease.budget_left_s, less
#                 about 70 s for its set-up, the packing and the give-back; 3.4 minutes of lanes on 2026-11-29)
#                 Earlier leases: 2026-11-29 (an H200; two calls of 6.8 and 3.6 minutes after a 3.5-minute start)
#                 ran `sst2_nse` seed 6 (18 of 25 epochs, finished on a CPU core), ESIM's and MMA-NSE's (batch 32)
#                 seventh seeds (MMA-NSE at 128 did not start), `sst2_nse_tuned_embeddings_peer_training` seed 3
#                 and `sst5_nse_k50_tuned_embeddings_peer_training` seed 2, which is no GPU lane (k = 50, batch 32:
#                 107-184 s an epoch beside three lanes, 89-96 s on a CPU core; docs/research/gpu/2026-11-29-h200); the
#                 second of 2026-11-28 (an H200) ran `sst2_nse` seed 5, the SNLI sixth seeds and
#                 the NSE-settings LSTMs' (sst_peers sst2_lstm_in_nse_settings_fixed_embeddings --seeds 5, and
#                 sst2_lstm2_in_nse_settings_fixed_embeddings --seeds 4) as four lanes in calls of 7 and 5.3 minutes,
#                 every run finished (docs/research/gpu/2026-11-28-h200-2; allennlp's `lstm` rows gain little there, about 20
#                 s an epoch); the first of 2026-11-28 (an H200) ran these lanes with seeds 4 and 5 of `sst2_nse`
#                 in two lanes: the SNLI lane finished (ESIM 210 s, MMA-NSE 239 s at batch 32 and 89 s at 128), the
#                 binary lanes reached epoch 23 of 25, and only one of their two 34.1 MiB checkpoints could come back
#                 (docs/research/gpu/2026-11-28-h200). 2026-11-27 trained `iwslt_nse_nse` and `iwslt_nse_lstm` at the paper's
#                 settings (40 epochs in 4.0 and 4.3 minutes) and `sst5_nse_tuned_embeddings` seed 1 (11 of 25 epochs
#                 in 11.6 minutes, finished on the CPU); its evening lease found two rows that are no GPU lanes:
#                 `sst5_lstmn` (batch 5, the paper's: 8.8 minutes an epoch as CUDA graphs beside two lanes, where a
#                 CPU core takes 7.1 once denormals are flushed) and `sst2_iram_full` (100 s an epoch, but its 264 MiB
#                 checkpoint cannot come back and its 10 epochs need more than one lease); `sst5_nse` seed 2 ran 7 of
#                 its 25 epochs there. Rows that read .gpudata/glove's 17 MB top-100k file (IWSLT, WikiQA) need a
#                 first `setup` call carrying .gpusite alone, then the data in the next call
#                 (the translation rows add .gpudata/iwslt14_de_en, 2.7 MB)
#                 (the leases of 2026-11-26 and 27 trained the 3-layer PTB lanes, REPLICATE="ptb_lm
#                 ptb_lstm_3layers_skip --seeds 2;ptb_lm ptb_lstmn_3layers_skip --seeds 3;ptb_lm
#                 ptb_lstm_3layers_skip --seeds 3", carry [".gpusite", ".gpudata/ptb"]: two calls of a 15-minute
#                 lease, about 7.6 and 5.3 minutes, finish three such lanes); each lane is one process
#                 training its rows one after another until $REPLICATE_MINUTES (default 6.5) have passed (a row
#                 that fails as CUDA graphs is resumed once with the eager loop). Then
#                 benchmarks/replication/carry_runs.py packs every run's record and each unfinished run's last end-of-epoch
#                 checkpoint (the lanes' first rows first, in lane order, then finished runs' archives, within 60
#                 MiB packed) into $OUT/runs.tar.gz.NNN; here,
#                 `carry_runs.py unpack` puts them into the runs folder and replicate.py resumes them on the CPU
#                 (a later call's parts after an earlier call's: a run there is replaced only where carried further).
#                 Back in $OUT: replication.jsonl (the rows this call finished; a later call on the warm machine
#                 neither evaluates nor returns an earlier call's again) and the parts. The runs stay in
#                 /tmp/memplugins-runs ($REPLICATE_RUNS) on the machine: a later call while it is warm, with the
#                 same lanes, resumes them there (the skip row of 2026-11-26 finished so, in a second call of 4
#                 minutes).
#                 WikiQA (REPLICATE="wikiqa wikiqa_mma_nse"): its data (.gpudata/wikiqa, .gpudata/glove: 23 MB) does
#                 not fit one call's carry beside .gpusite, so a first call carrying .gpusite (any phase, e.g.
#                 check) unpacks the stack into /tmp, and the next call, on the same machine while it is warm,
#                 carries only [".gpudata/wikiqa", ".gpudata/glove"]. A checkpoint of its 20.8M trained parameters
#                 with Adam's moments (about 260 MiB with the GloVe table) is far over carry_runs.py's 60 MiB: the
#                 row comes back only as its replication.jsonl line, so it must finish within the call
#     nan         the 3-layer LSTMN's NaN on CUDA (docs/research/ptb_lm.md, "NaN on the GPU": a race in the tape read, fixed
#                 in 6f36416; this phase found its lanes clean after the fix, and stays as that check): its PTB
#                 language model from scratch, seed 1's seeds, in three lanes sharing the GPU for $NAN_SECONDS
#                 (default 420): as CUDA graphs, eager with the Triton kernels, eager with torch's operations
#                 (MEMPLUGINS_TRITON=0). Each checks every gradient before the optimizer steps
#                 (research/gradient_probe.py) and stops at a non-finite one, naming the batch and the parameters;
#                 the lanes' probe logs come back in $OUT/probes.tar.gz. $NAN_LANES picks lanes by name
#                 (default "graphs eager_triton eager_torch")
#     races       benchmarks/speed/kernel_races.py: each Triton kernel run $RACE_RUNS times (default 300) on the same inputs,
#                 counting the runs not bitwise equal to the first (a race between a program's warps); the kernels'
#                 GPU IR in $OUT/ir.tar.gz. With $RACES_BEFORE naming a folder that holds an older memplugins
#                 package, that one is measured first, in the same call
# Each phase writes its tables to $OUT/PHASE.md (OUT defaults to gpu-results/). The stack comes from
# .gpusite/site.tar.xz (scripts/gpu_prepare.sh, run beforehand where a registry is reachable), unpacked once into
# /tmp/memplugins-site and put before the machine's own packages; data from .gpudata/. On a lent machine:
#   run(command="scripts/gpu_run_all.sh check encoders", carry=[".gpusite", ".gpudata/snli", ".gpudata/sst",
#       ".gpudata/ptb", ".gpudata/glove/glove.6B.50d.sst_snli-devtest.txt.gz"])
# (not all of .gpudata: with the WikiQA row's files it is over the 64 MiB a call carries beside .gpusite)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/gpu-results}"
PYTHON="${PYTHON:-python3}"
PHASE_SECONDS="${PHASE_SECONDS:-560}"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(check encoders tree throughput graphs workers families)
for phase in "${phases[@]}"; do
  case "$phase" in setup|check|encoders|tree|throughput|graphs|workers|families|replicate|nan|races) ;; *) echo "unknown phase: $phase" >&2; exit 2;; esac
done
mkdir -p "$OUT"
SITE="${MEMPLUGINS_SITE:-/tmp/memplugins-site}"  # where .gpusite is unpacked
if [ -s .gpusite/site.tar.xz ] && [ ! -e "$SITE/.unpacked" ]; then
  mkdir -p "$SITE" && tar -C "$SITE" -xJf .gpusite/site.tar.xz && touch "$SITE/.unpacked" || exit 1
fi
[ -d "$SITE" ] && export PYTHONPATH="$SITE:$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PYTHON" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('allennlp') is None)" 2>/dev/null; then
  echo "gpu_run_all: $PYTHON has no allennlp and $SITE is not unpacked: carry .gpusite in this call or in an" \
       "earlier call on the same warm machine (scripts/gpu_prepare.sh builds it)" >&2
  exit 1
fi
export MPLBACKEND=Agg TOKENIZERS_PARALLELISM=false

setup() {
  # only the stack, unpacked above from a carried .gpusite, and a check that it imports: the first call of a
  # lease whose data does not fit one call's carry beside .gpusite (the replicate phase's default lanes)
  "$PYTHON" -c "import torch, allennlp, memplugins
print(f'torch {torch.__version__}, cuda {torch.cuda.is_available()}')"
}

check() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$PYTHON" - <<'PY'
import torch, allennlp, allennlp_models, memplugins
from allennlp.version import VERSION
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}, allennlp {VERSION},"
      f" memplugins from {memplugins.__file__}")
try:
    import triton
    print(f"triton {triton.__version__}")
except ImportError:
    print("no triton")
PY
  "$PYTHON" -m pytest -q -p no:cacheprovider -rf --durations 5 tests/gpu_test.py -k "not every_family"
}

families() {
  # every family trained by `allennlp train` on CUDA, AMP off and on: about 25 minutes in all on an H100, so a
  # lease runs it in parts, e.g. FAMILIES_FILTER=snli, then sst, then "not snli and not sst"
  "$PYTHON" -m pytest -q -p no:cacheprovider -rf --durations 5 tests/gpu_test.py \
      -k "every_family and (${FAMILIES_FILTER:-every_family})"
}

encoders() {
  local run="$PYTHON benchmarks/speed/encoders.py --device cuda --repeats 30"
  $run
  echo "(the same without the Triton kernels, LSTMN tape read and NSE memory access: MEMPLUGINS_TRITON=0)"
  MEMPLUGINS_TRITON=0 $run --encoders torch.nn.LSTM lstmn nse
  $run --amp --amp-dtype float16
  $run --amp --amp-dtype bfloat16
  $run --batch 128
  $run --steps 80
  $run --batch 128 --amp --amp-dtype bfloat16
}

tree() {
  local trees="$ROOT/.gpudata/sst/trees/train.txt"
  cd benchmarks
  for dim in 300 50; do
    "$PYTHON" tree_lstm.py --device cuda --trees "$trees" --no-recursive --input-dim $dim --hidden-dim $dim \
        --batches 40 --repeats 5
    "$PYTHON" tree_lstm.py --device cuda --trees "$trees" --no-recursive --input-dim $dim --hidden-dim $dim \
        --batches 40 --repeats 5 --amp float16
  done
  echo "(d = 300 without the Triton level kernels: MEMPLUGINS_TRITON=0)"
  MEMPLUGINS_TRITON=0 "$PYTHON" tree_lstm.py --device cuda --trees "$trees" --no-recursive --input-dim 300 \
      --hidden-dim 300 --batches 40 --repeats 5
  cd "$ROOT"
}

throughput() {
  # the default settings (graphs on), first every config on AllenNLP's loader, then on memplugins' tensorized one
  for loader in multiprocess tensorized; do
    "$PYTHON" benchmarks/speed/train_throughput.py --data "$ROOT/.gpudata" --task snli --cuda-device 0 --amp both \
        --loader --epochs 2 --data-loader "$loader" --only snli_mma_nse snli_lstmn_deep_fusion \
        "esim (allennlp-models)" "decomposable_attention (allennlp-models)"
  done
}

graphs() {
  MEMPLUGINS_CUDA_GRAPHS=1 "$PYTHON" benchmarks/speed/train_throughput.py --data "$ROOT/.gpudata" --task snli \
      --cuda-device 0 --amp both --epochs 2 --only snli_mma_nse snli_lstmn_deep_fusion "esim (allennlp-models)"
}

workers() {
  "$PYTHON" benchmarks/speed/train_throughput.py --data "$ROOT/.gpudata" --task snli --cuda-device 0 --amp both \
      --num-workers 2 --only snli_mma_nse snli_lstmn_deep_fusion "esim (allennlp-models)" \
      "decomposable_attention (allennlp-models)"
}

replicate() {
  local runs=${REPLICATE_RUNS:-/tmp/memplugins-runs} end results before
  end=$("$PYTHON" -c "import time; print(round(time.time() + 60 * ${REPLICATE_MINUTES:-6.5}))")
  # the results stay beside the runs, so that a later call on the warm machine skips what an earlier one finished
  # (a fresh file per call had it evaluate those runs again and return their lines twice); $OUT gets this call's lines
  results="$runs/replication.jsonl"
  mkdir -p "$runs" && touch "$results"
  before=$(wc -l < "$results")
  local lanes lane index=0 firsts=()
  IFS=';' read -ra lanes <<< "${REPLICATE:-sst_nse sst2_nse --seeds 7;snli snli_esim snli_mma_nse_batch32 snli_mma_nse --seeds 8;sst_nse sst2_nse_tuned_embeddings_peer_training --seeds 4}"
  for lane in "${lanes[@]}"; do
    index=$((index + 1))
    set -- $lane
    firsts+=("$2")  # each lane's first row, in lane order: carry_runs.py packs their checkpoints first
    (
      family=$1; shift
      rows=() options=()  # the words before the first option are rows; the rest goes to every replicate.py call
      for word in "$@"; do
        if [ ${#options[@]} -gt 0 ] || [[ "$word" == --* ]]; then options+=("$word"); else rows+=("$word"); fi
      done
      for row in "${rows[@]}"; do
        # as CUDA graphs first; a row whose run fails is resumed once with the eager loop
        for graphs in 1 0; do
          left=$(( end - $(date +%s) ))
          [ "$left" -gt 60 ] || { echo "[lane $index] $row: not started ($left s left)"; break 2; }
          echo "[lane $index] $row: $left s left, MEMPLUGINS_CUDA_GRAPHS=$graphs"
          MEMPLUGINS_CUDA_GRAPHS=$graphs "$PYTHON" benchmarks/replication/replicate.py "$family" --rows "$row" \
              --device "${REPLICATE_DEVICE:-cuda:0}" --threads 3 --minutes "$("$PYTHON" -c "print($left / 60)")" \
              --data "$ROOT/.gpudata" --runs "$runs" --results "$results" ${options[@]+"${options[@]}"} 2>&1 \
              | grep -v "^|\|^###\|^$" | sed "s/^/[lane $index] /"
          [ "${PIPESTATUS[0]}" -eq 0 ] && break
        done
      done
    ) &
  done
  wait
  tail -n +$((before + 1)) "$results" > "$OUT/replication.jsonl"
  "$PYTHON" benchmarks/replication/carry_runs.py pack "$runs" "$OUT" --first "${firsts[@]}"
}

nan() {
  local lanes=/tmp/memplugins-nan lane
  rm -rf "$lanes" && mkdir -p "$lanes"
  for lane in "graphs 1 1" "eager_triton 0 1" "eager_torch 0 0"; do
    set -- $lane
    [[ " ${NAN_LANES:-graphs eager_triton eager_torch} " == *" $1 "* ]] || continue
    (
      MEMPLUGINS_CUDA_GRAPHS=$2 MEMPLUGINS_TRITON=$3 PTB_TRAIN="$ROOT/.gpudata/ptb/ptb.train.txt" \
      PTB_VALIDATION="$ROOT/.gpudata/ptb/ptb.valid.txt" NUM_EPOCHS=20 LM_DROPOUT=0.5 LSTMN_LAYERS=3 \
      CUDA_DEVICE="${NAN_DEVICE:-0}" OMP_NUM_THREADS=3 PYTHONPATH="$ROOT/benchmarks${PYTHONPATH:+:$PYTHONPATH}" \
      timeout "${NAN_SECONDS:-420}" "$PYTHON" -m allennlp train training_config/ptb_lstmn_lm_3layers.jsonnet \
          -s "$lanes/$1" --include-package memplugins --include-package gradient_probe --file-friendly-logging \
          -o '{"random_seed": 13371, "numpy_seed": 1338, "pytorch_seed": 134, "trainer.callbacks": [{"type": "gradient_probe"}]}' \
          > "$lanes/$1.log" 2>&1
      code=$?
      epochs=$(ls "$lanes/$1"/metrics_epoch_*.json 2>/dev/null | wc -l)
      echo "[$1] exit $code after $epochs epochs; $(grep -h -o "non-finite gradient.*" "$lanes/$1.log" | head -1)"
      grep -h "Error\|error" "$lanes/$1.log" | grep -v "^\s*$" | tail -2 | sed "s/^/[$1]   /"
    ) &
  done
  wait
  (cd "$lanes" && tar -czf "$OUT/probes.tar.gz" */probe.jsonl */metrics_epoch_*.json 2>/dev/null)
}

races() {
  if [ -n "${RACES_BEFORE:-}" ]; then
    echo "### before: $RACES_BEFORE"
    PYTHONPATH="$RACES_BEFORE:$PYTHONPATH" "$PYTHON" benchmarks/speed/kernel_races.py --runs "${RACE_RUNS:-300}"
    echo "### this tree"
  fi
  "$PYTHON" benchmarks/speed/kernel_races.py --runs "${RACE_RUNS:-300}" --ir-dir /tmp/memplugins-ir
  (cd /tmp/memplugins-ir 2>/dev/null && tar -czf "$OUT/ir.tar.gz" .)
}

export -f setup check encoders tree throughput graphs workers families replicate nan races
export PYTHON ROOT OUT FAMILIES_FILTER REPLICATE REPLICATE_MINUTES REPLICATE_DEVICE NAN_LANES NAN_SECONDS NAN_DEVICE \
    RACE_RUNS RACES_BEFORE
status=0
for phase in "${phases[@]}"; do
  echo "## $phase, $(date -u +%Y-%m-%dT%H:%MZ), commit ${MEMPLUGINS_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo ?)}" \
      | tee "$OUT/$phase.md"
  timeout "$PHASE_SECONDS" bash -c "$phase" 2>&1 | tee -a "$OUT/$phase.md" \
      | grep -v -E "it/s\]|s/it\]"
  code=${PIPESTATUS[0]}
  echo "($phase: exit $code)" | tee -a "$OUT/$phase.md"
  [ "$code" -ne 0 ] && status=$code
done
exit $status
