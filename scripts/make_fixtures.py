"""
Regenerates the real-data fixtures under fixtures/ from ../shared/data (a developer tool: nothing at run time
reads ../shared). Deterministic: the same inputs give byte-identical fixtures.

    .venv/bin/python scripts/make_fixtures.py [--shared ../shared/data]
"""
import argparse
import gzip
import json
import random
from pathlib import Path

from memplugins.fields import parse_binary_tree
from memplugins.tokenizers import SpacyBlankTokenizer

ROOT = Path(__file__).resolve().parent.parent


def write_ptb_format(records, tokenizer) -> None:
    """
    A tiny language-modelling fixture in the Mikolov PTB format (lowercased, numbers as N, words seen once as
    <unk>, one sentence per line with a leading space), made from the SNLI sample's sentences: the PTB text itself
    is LDC-licensed and not shipped.
    """
    import re
    from collections import Counter

    sentences = []
    for line in records:
        record = json.loads(line)
        for key in ("sentence1", "sentence2"):
            words = [t.text.lower() for t in tokenizer.tokenize(record[key])]
            sentences.append(["N" if re.fullmatch(r"[0-9][0-9.,]*", w) else w for w in words])
    counts = Counter(w for sentence in sentences for w in sentence)
    lines = [" " + " ".join(w if counts[w] > 1 else "<unk>" for w in sentence) + " \n" for sentence in sentences]
    out = ROOT / "fixtures" / "ptb_format"
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.txt").write_text("".join(lines[:1600]), encoding="utf-8")
    (out / "valid.txt").write_text("".join(lines[1600:1800]), encoding="utf-8")
    (out / "tiny.txt").write_text("".join(lines[1800:1830]), encoding="utf-8")


def write_yelp_format() -> None:
    """Self-written restaurant reviews (synthetic: composed from hand-written phrases, no real review text) in the
    Tang et al. (2015) `.ss` format, 12 per rating 1-5, for the `hierarchical_documents` reader and configs."""
    rng = random.Random(13)
    openers = {
        1: ["the food was cold and the staff ignored us .", "worst dinner i have had in years .",
            "we waited an hour for a table that was half empty ."],
        2: ["the pasta was bland and overpriced .", "service was slow but the room was clean .",
            "not terrible , just forgettable ."],
        3: ["an average place with a few good dishes .", "the tacos were fine , the salsa was better .",
            "okay for a quick lunch ."],
        4: ["really good burgers and friendly staff .", "the soup was rich and the bread was fresh .",
            "we will come back for the desserts ."],
        5: ["best sushi in town , hands down .", "everything we ordered was perfect .",
            "the chef came out to say hello and the meal was outstanding ."],
    }
    middles = {
        1: ["my steak was burnt and nobody apologized .", "the bathroom was dirty .",
            "they charged us for drinks we never got ."],
        2: ["the portions were small for the price .", "our server forgot the side dishes .",
            "the music was far too loud ."],
        3: ["parking is hard to find .", "the wait was about twenty minutes .", "prices are fair for the area ."],
        4: ["the patio is lovely in the evening .", "our server knew the menu well .",
            "the coffee was strong and hot ."],
        5: ["the wine list is excellent .", "the staff made us feel at home .", "even the side salad was memorable ."],
    }
    closers = {1: ["avoid .", "never again ."], 2: ["probably will not return .", "there are better options nearby ."],
               3: ["it is fine .", "nothing special but no complaints ."], 4: ["recommended .", "a solid choice ."],
               5: ["a must visit !", "five stars without a doubt ."]}
    lines = []
    for i in range(60):
        rating = (i % 5) + 1
        n = rng.randint(1, 5)
        sentences = [rng.choice(openers[rating])]
        sentences += rng.sample(middles[rating], min(n - 1, 3))[: max(0, n - 2)]
        sentences += [rng.choice(closers[rating])] if n > 1 else []
        lines.append(f"user{i % 7}\t\tplace{i % 11}\t\t{rating}\t\t" + " <sssss> ".join(sentences))
    out = ROOT / "fixtures" / "yelp13_format"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sample.ss").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args()
    shared = Path(args.shared)

    with gzip.open(shared / "snli" / "snli_1.0_dev.jsonl.gz", "rt", encoding="utf-8") as dev:
        lines = dev.read().splitlines()
    rng = random.Random(20161)
    sample = sorted(rng.sample(range(len(lines)), 1000))  # keep file order
    sampled = [lines[i] for i in sample]
    out = ROOT / "fixtures" / "snli"
    out.mkdir(parents=True, exist_ok=True)
    (out / "snli_1.0_dev_sample_train.jsonl").write_text("\n".join(sampled[:800]) + "\n", encoding="utf-8")
    (out / "snli_1.0_dev_sample_validation.jsonl").write_text("\n".join(sampled[800:]) + "\n", encoding="utf-8")
    # a small file for fast unit tests, including '-' labelled lines to exercise the skip
    tiny = [line for line in sampled[800:] if json.loads(line)["gold_label"] == "-"][:2] + sampled[800:818]
    (out / "tiny.jsonl").write_text("\n".join(tiny) + "\n", encoding="utf-8")
    predict = [json.loads(line) for line in sampled[980:]]
    (out / "predict_sample.jsonl").write_text(
        "".join(json.dumps({"premise": r["sentence1"], "hypothesis": r["sentence2"]}) + "\n" for r in predict[:10]),
        encoding="utf-8",
    )

    tokenizer = SpacyBlankTokenizer()
    write_ptb_format(sampled, tokenizer)
    vocabulary = set()
    for line in sampled:
        record = json.loads(line)
        for key in ("sentence1", "sentence2"):
            vocabulary.update(token.text.lower() for token in tokenizer.tokenize(record[key]))
            vocabulary.update(leaf.lower() for leaf in parse_binary_tree(record[key + "_binary_parse"]).leaves)
    rows = []
    seen = set()
    for name in ("glove.6B.50d.sst_snli-devtest.txt.gz", "glove.6B.50d.top100k.txt.gz"):
        with gzip.open(shared / "glove" / name, "rt", encoding="utf-8") as glove:
            for row in glove:
                word = row.split(" ", 1)[0]
                if word in vocabulary and word not in seen:
                    seen.add(word)
                    rows.append(row)
    glove_out = ROOT / "fixtures" / "glove"
    glove_out.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(glove_out / "glove.6B.50d.snli_sample.txt.gz", "wb", mtime=0) as handle:
        handle.write("".join(rows).encode("utf-8"))
    iwslt_out = ROOT / "fixtures" / "iwslt14"
    iwslt_out.mkdir(parents=True, exist_ok=True)
    for language in ("de", "en"):  # the first 300 line-aligned pairs of IWSLT14 valid, byte for byte
        with open(shared / "iwslt14_de_en" / f"valid.de-en.{language}", "rb") as source:
            head = b"".join(source.readline() for _ in range(300))
        (iwslt_out / f"sample.de-en.{language}").write_bytes(head)
    write_yelp_format()
    print(f"{len(sampled)} SNLI pairs; vocabulary {len(vocabulary)} types, {len(rows)} found in GloVe")


if __name__ == "__main__":
    main()
