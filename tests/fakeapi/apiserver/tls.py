"""TLS material for the fake apiserver, made with the openssl CLI: the CA,
the server certificate, client certificates that log in as CN/O."""

import os
import subprocess


def _openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_tls(tls_dir):
    """Makes ca.crt/ca.key and server.crt/server.key (SAN IP:127.0.0.1 and
    DNS:localhost) in tls_dir unless they exist. Returns a dict of paths."""
    os.makedirs(tls_dir, exist_ok=True)
    p = {k: os.path.join(tls_dir, k) for k in
         ("ca.crt", "ca.key", "server.crt", "server.key")}
    if not os.path.exists(p["ca.crt"]):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", p["ca.key"],
                 "-out", p["ca.crt"], "-days", "3650", "-subj", "/CN=fakeapi-ca",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    if not os.path.exists(p["server.crt"]):
        _sign(tls_dir, "server", "/CN=kube-apiserver",
              "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
              "extendedKeyUsage=serverAuth\n")
    return {"ca": p["ca.crt"], "ca_key": p["ca.key"], "cert": p["server.crt"],
            "key": p["server.key"]}


def make_client_cert(tls_dir, name, user, groups=()):
    """Makes <name>.crt/<name>.key signed by the CA of tls_dir for a client
    certificate login as `user` (CN) in `groups` (O). Returns (crt, key)."""
    make_tls(tls_dir)
    subj = "/CN=" + user + "".join("/O=" + g for g in groups)
    _sign(tls_dir, name, subj, "extendedKeyUsage=clientAuth\n")
    return (os.path.join(tls_dir, name + ".crt"), os.path.join(tls_dir, name + ".key"))


def _sign(tls_dir, name, subj, ext):
    key = os.path.join(tls_dir, name + ".key")
    csr = os.path.join(tls_dir, name + ".csr")
    crt = os.path.join(tls_dir, name + ".crt")
    extf = os.path.join(tls_dir, name + ".ext")
    with open(extf, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                + ext)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", csr, "-subj", subj)
    _openssl("x509", "-req", "-in", csr, "-CA", os.path.join(tls_dir, "ca.crt"),
             "-CAkey", os.path.join(tls_dir, "ca.key"), "-CAcreateserial",
             "-out", crt, "-days", "3650", "-extfile", extf)
    os.unlink(csr)
    os.unlink(extf)
