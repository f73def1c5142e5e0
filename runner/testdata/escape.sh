#!/bin/sh
# A harness whose descendants leave its process group, then it exits: a
# sleep in a session of its own (setsid), and one behind a double fork
# (the subshell and the setsid'd shell exit at once, leaving the sleep an
# orphan in another session). Their pids are appended to $PIDS.
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo $! >> "$PIDS"
( setsid sh -c 'sleep 300 & echo $! >> "$PIDS"' </dev/null >/dev/null 2>&1 & )
while [ "$(wc -l < "$PIDS")" -lt 2 ]; do sleep 0.05; done
echo started
