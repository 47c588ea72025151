#!/usr/bin/python3
"""Parses a received message with Python's email package and prints what a mail client
would see, as JSON: subject, the HTML part, the cid: references in it and the Content-IDs
present, and every attachment with its size.

    parse_mail.py MESSAGE.eml
"""
import email
import email.policy
import json
import re
import sys

msg = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)
html = msg.get_body(preferencelist=("html",))
text = msg.get_body(preferencelist=("plain",))
html_text = html.get_content() if html else ""
content_ids, attachments = {}, []
for part in msg.walk():
    if part.is_multipart():
        continue
    cid = part.get("Content-ID")
    if cid:
        content_ids[cid.strip("<>")] = {"type": part.get_content_type(), "bytes": len(part.get_payload(decode=True))}
    if part.get_content_disposition() == "attachment":
        attachments.append({"filename": part.get_filename(), "type": part.get_content_type(),
                            "bytes": len(part.get_payload(decode=True))})
print(json.dumps({
    "subject": str(msg["Subject"]),
    "to": str(msg["To"]),
    "content_type": msg.get_content_type(),
    "has_html": html is not None,
    "has_text": text is not None,
    "html": html_text,
    "cid_refs": sorted(set(re.findall(r'src="cid:([^"]+)"', html_text))),
    "content_ids": content_ids,
    "attachments": attachments,
}))
