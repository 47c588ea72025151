#!/usr/bin/python3
"""A real SMTP server on loopback (Debian's aiosmtpd) that saves every message it accepts.

    smtp_sink.py PORT OUT_DIR

Writes OUT_DIR/<n>.eml (the message as received) and OUT_DIR/<n>.json (envelope sender
and recipients), and OUT_DIR/ready once it listens. Runs until killed.
"""
import json
import os
import sys
import time

from aiosmtpd.controller import Controller


class SaveHandler:
    def __init__(self, out):
        self.out = out
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(self.out, str(self.count))
        with open(base + ".eml", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        with open(base + ".json", "w") as f:
            json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos}, f)
        return "250 Message accepted for delivery"


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    controller = Controller(SaveHandler(out), hostname="127.0.0.1", port=port)
    controller.start()
    open(os.path.join(out, "ready"), "w").close()
    try:
        while True:
            time.sleep(1)
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
