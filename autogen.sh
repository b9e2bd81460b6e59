#!/bin/sh
# Regenerate the build system: ./autogen.sh && ./configure && make && make check
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force
