#!/bin/sh
# A pass_persist program that answers PING, then never answers again.
read line; echo PONG
exec sleep 60
