#!/usr/bin/python3
"""A real SMTP server on loopback (Debian's aiosmtpd) that saves every message it accepts.

    smtp_sink.py PORT OUT_DIR [--starttls CERT KEY | --smtps CERT KEY] [--auth USER PASSWORD_ENV]

--starttls: the server offers STARTTLS and refuses mail (and AUTH) before it; --smtps: the
socket is TLS from the first byte (implicit TLS, port 465 style). --auth: AUTH PLAIN/LOGIN
required, with the password read from the environment variable PASSWORD_ENV.

Writes OUT_DIR/<n>.eml (the message as received) and OUT_DIR/<n>.json (envelope sender and
recipients, whether the session was encrypted, the login that authenticated), and
OUT_DIR/ready once it listens. Runs until killed.
"""
import argparse
import json
import os
import ssl
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class SaveHandler:
    def __init__(self, out):
        self.out = out
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        base = os.path.join(self.out, str(self.count))
        with open(base + ".eml", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        with open(base + ".json", "w") as f:
            json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                       "tls": session.ssl is not None or server.transport.get_extra_info("ssl_object") is not None,
                       "login": login}, f)
        return "250 Message accepted for delivery"


class Authenticator:
    def __init__(self, user, password):
        self.user, self.password = user.encode(), password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login == self.user and \
            auth_data.password == self.password
        return AuthResult(success=ok, handled=False, auth_data=auth_data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("out")
    ap.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--smtps", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--auth", nargs=2, metavar=("USER", "PASSWORD_ENV"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    kwargs = {}
    cert = args.starttls or args.smtps
    if cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*cert)
        if args.starttls:
            kwargs.update(tls_context=context, require_starttls=True)
        else:
            kwargs.update(ssl_context=context)
    if args.auth:
        # aiosmtpd counts only STARTTLS as TLS for AUTH; an --smtps socket is TLS from the start.
        kwargs.update(authenticator=Authenticator(args.auth[0], os.environ[args.auth[1]]), auth_required=True,
                      auth_require_tls=bool(args.starttls))
    else:
        kwargs.update(auth_require_tls=False)
    controller = Controller(SaveHandler(args.out), hostname="127.0.0.1", port=args.port,
                            server_hostname="localhost", **kwargs)
    controller.start()
    open(os.path.join(args.out, "ready"), "w").close()
    try:
        while True:
            time.sleep(1)
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
