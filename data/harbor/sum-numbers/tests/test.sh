#!/bin/bash
# Binary reward; the verifier runs as root ([verifier] user) with ANSWER_FILE from [verifier] env.
mkdir -p /logs/verifier
want=$(python3 -c "print(sum(int(l) for l in open('/srv/numbers.txt') if l.strip()))")
got=$(tr -d '[:space:]' < "$ANSWER_FILE" 2>/dev/null)
echo "verifier uid $(id -u), want $want, got $got"
if [ "$got" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
