# CI stand-in for python:3.11-slim-bookworm (deploy/ci/compose-e2e.sh): Debian's Python 3.11
# on a base bootstrapped from Debian packages. `python` is python3 (python-is-python3), with venv.
# pip is pointed at the machine's CA bundle, copied into the base at bootstrap.
ARG BASE
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 \
    PIP_CERT=/usr/local/share/parterre-ci/ca-bundle.crt \
    SSL_CERT_FILE=/usr/local/share/parterre-ci/ca-bundle.crt
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python-is-python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python --version
CMD ["python3"]
