"""memplugins: memory- and attention-augmented encoders for AllenNLP 2.10 on Python 3.11-3.13 / torch 2."""
from pathlib import Path

from setuptools import find_packages, setup

with open("README.md", encoding="utf-8") as readme:
    long_description = readme.read()


def shared_files(folder: str):
    """(target folder, files) pairs for `data_files`: a folder's tree under `share/memplugins/` (the shipped configs
    and the fixtures their defaults point at, so `memplugins train NAME` works from a wheel install too)."""
    groups = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            groups.setdefault(str(Path("share/memplugins") / path.parent), []).append(str(path))
    return sorted(groups.items())


setup(
    name="memplugins",
    version="0.2.0",
    description="LSTMN, NSE/MMA-NSE, tree LSTM, IRAM and attention RTE models as AllenNLP plugins",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(include=["memplugins", "memplugins.*"]),
    package_data={"memplugins": ["modelcards/*.json"]},
    py_modules=["memplugins_launcher"],
    data_files=shared_files("training_config") + shared_files("fixtures") + shared_files("examples"),
    python_requires=">=3.11,<3.14",
    # allennlp / allennlp-models are installed with --no-deps (see requirements/); only what we import directly
    # is declared here, so `pip install memplugins` never pulls allennlp's torch<1.13 pin.
    install_requires=["torch>=2.0", "spacy>=3.8,<3.9", "numpy"],
    # `memplugins <allennlp subcommand> ...`: AllenNLP's command line with memplugins loaded first (from any folder,
    # no --include-package needed). The launcher runs memplugins/cli.py without importing the package first.
    entry_points={"console_scripts": ["memplugins=memplugins_launcher:main"]},
    license="Apache-2.0",
    classifiers=["Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
                 "Programming Language :: Python :: 3.13"],
)
