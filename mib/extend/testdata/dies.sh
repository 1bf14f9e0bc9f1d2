#!/bin/sh
# A pass_persist program that answers PING and one get, then exits.
read line; echo PONG
read cmd; read oid
echo "$oid"; echo integer; echo $$
exit 0
