#!/usr/bin/env bash
# Docker engine + gVisor (runsc) for the docker sandbox backend's tests. Idempotent; run as root on
# Debian. Containers get no network: dockerd runs without a bridge or iptables rules.
set -euo pipefail

LOG=/var/log/rlvr-dockerd.log
DAEMON_JSON=/etc/docker/daemon.json
WANTED_JSON='{"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", "--network=none"]}}}'

if [ "$(id -u)" -ne 0 ]; then
  echo "docker.sh: not root; skipping docker engine set-up" >&2
  exit 0
fi

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
[ -x /usr/bin/runsc ] || missing+=(runsc)
if [ "${#missing[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || echo "docker.sh: apt-get update failed; trying the cached lists" >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "docker.sh: no apt-get; cannot install ${missing[*]}" >&2
    exit 0
  fi
fi

mkdir -p /etc/docker
restart=0
if [ ! -f "$DAEMON_JSON" ] || ! grep -q '"path": *"/usr/bin/runsc"' "$DAEMON_JSON"; then
  echo "$WANTED_JSON" >"$DAEMON_JSON"
  restart=1
fi

engine_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if engine_up && [ "$restart" -eq 1 ] && [ -f /var/run/docker.pid ]; then
  kill "$(cat /var/run/docker.pid)" 2>/dev/null || true
  for _ in $(seq 1 50); do engine_up || break; sleep 0.2; done
fi

if ! engine_up; then
  # containerd is started by dockerd itself when it is not already running.
  nohup dockerd --bridge=none --iptables=false --ip6tables=false >"$LOG" 2>&1 &
  for _ in $(seq 1 150); do
    engine_up && break
    sleep 0.2
  done
fi

if engine_up; then
  echo "docker.sh: engine $(docker version --format '{{.Server.Version}}') up; runtimes: $(docker info --format '{{json .Runtimes}}' 2>/dev/null)"
else
  echo "docker.sh: dockerd did not come up; see $LOG" >&2
  tail -n 20 "$LOG" >&2 || true
  exit 1
fi
