"""memplugins: memory- and attention-augmented encoders for AllenNLP 2.10 on Python 3.11 / torch 2."""
from setuptools import find_packages, setup

with open("README.md", encoding="utf-8") as readme:
    long_description = readme.read()

setup(
    name="memplugins",
    version="0.1.0",
    description="LSTMN, NSE/MMA-NSE, tree LSTM, IRAM and attention RTE models as AllenNLP plugins",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(include=["memplugins", "memplugins.*"]),
    python_requires=">=3.11,<3.12",
    # allennlp / allennlp-models are installed with --no-deps (see requirements/); only what we import directly
    # is declared here, so `pip install memplugins` never pulls allennlp's torch<1.13 pin.
    install_requires=["torch>=2.0", "spacy>=3.8,<3.9", "numpy"],
    # `memplugins <allennlp subcommand> ...`: AllenNLP's command line with memplugins loaded first (attention-map
    # from any folder, no --include-package needed); see memplugins/cli.py
    entry_points={"console_scripts": ["memplugins=memplugins.cli:main"]},
    license="Apache-2.0",
)
