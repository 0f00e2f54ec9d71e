#!/usr/bin/env bash
# A Parterre bot in bash: the stdio line protocol with no JSON parser.
#
#   parterre connect --exec "bash bots/examples/random_bot.sh" --token T
#
# Every line on stdin is one JSON object whose first key is "type". A
# decision_request line starts {"type":"decision_request","match_id":..,
# "seq":..,"num_actions":N,...}; the bot prints a random index in 0..N-1.
# echo writes straight to the pipe, so nothing needs flushing. stderr goes to
# the adapter's log file for this child.
while IFS= read -r line; do
  case "$line" in
    '{"type":"decision_request"'*)
      n=${line#*\"num_actions\":}   # text after the first "num_actions":
      n=${n%%[,\}]*}                # up to the next , or }
      echo $((RANDOM % n))
      ;;
    '{"type":"match_ended"'*)
      echo "match ended: ${line:0:120}" >&2
      ;;
  esac
done
