#!/usr/bin/env python3
"""One client's stream of ledger batches for MariaDB/MySQL, the statements shaped as the
engine sends them (docs/engines/mysql.md, "A batch, statement by statement"), literal
values instead of prepared parameters; mysql_shapes.sh feeds it to the mariadb client.

usage: mysql_shapes.py SHAPE ITEMS TRANSACTIONS CLIENT RUN [ACCOUNTS] > stream.sql
SHAPE: raw  no claim, no key record (the accounts are still locked)
       a    today: a placeholder claim, then the key record's upsert
       c    as a (run it on a schema without idempotency_keys_by_expiry)
       d    the claim inserts the final committed record; no upsert
       b    the key in the transaction's row: the claim is the transactions INSERT
            (the schema needs the key columns and their unique index)
CLIENT and RUN make keys, transaction ids and account versions unique across streams;
ACCOUNTS (default 10000) is how many bench-user accounts the data set holds."""
import random
import sys
import time


def quote(text):
    return "'" + text + "'"


def main():
    shape, items_per_transaction, transactions, client, run = sys.argv[1], *map(int, sys.argv[2:6])
    accounts_total = int(sys.argv[6]) if len(sys.argv) > 6 else 10000
    if shape not in ("raw", "a", "b", "c", "d"):
        sys.exit(f"unknown shape {shape}")
    rng = random.Random(run * 1000 + client)
    version = run * 10**9 + client * 10**8  # entries' (account, version) stay unique
    now = int(time.time() * 1e6)
    out = sys.stdout
    out.write("SET SESSION autocommit = 0, innodb_lock_wait_timeout = 30,"
              " sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION';\n")
    key_columns = "INSERT INTO idempotency_keys (namespace, scope, `key`, fingerprint, state, transaction_id, created_at, expires_at) VALUES "
    for t in range(transactions):
        accounts = rng.sample(range(accounts_total), 2 * items_per_transaction)
        created = now + t
        expires = created + 86400 * 10**6
        items = []
        for g in range(items_per_transaction):
            items.append({
                "from": f"bench-user-{accounts[2 * g]:06d}", "to": f"bench-user-{accounts[2 * g + 1]:06d}",
                "amount": 1 + rng.randrange(100), "key": f"myb-r{run}-c{client}-{t}-{g}",
                "id": f"{created:016x}-{client:04d}-{run:04d}-{g:06d}-{rng.getrandbits(48):012x}",
                "fingerprint": f"{rng.getrandbits(256):064x}"})

        def transaction_rows(extra):
            return ",".join(f"({quote(i['id'])},'transfer',{created},'{{}}',NULL,{quote(i['fingerprint'])},NULL{extra(i)})"
                            for i in items)

        final_records = ",".join(
            f"('operations','load',{quote(i['key'])},{quote(i['fingerprint'])},'committed',{quote(i['id'])},{created},{expires})"
            for i in items)
        if shape in ("a", "c"):
            out.write(key_columns + ",".join(
                f"('operations','load',{quote(i['key'])},'','pending',NULL,0,9223372036854775807)" for i in items) + ";\n")
        elif shape == "d":
            out.write(key_columns + final_records + ";\n")
        elif shape == "b":
            out.write("INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, hold_id,"
                      " key_namespace, key_scope, `key`, key_generation, key_expires_at) VALUES "
                      + transaction_rows(lambda i: f",'operations','load',{quote(i['key'])},0,{expires}") + ";\n")
        ids = sorted({i["from"] for i in items} | {i["to"] for i in items})
        id_list = ",".join(quote(a) for a in ids)
        out.write("SELECT id, asset, allow_negative, overdraft_limit, closed, balance, version, created_at,"
                  f" entries_running_max FROM accounts FORCE INDEX (PRIMARY) WHERE id IN ({id_list}) ORDER BY id FOR UPDATE;\n")
        if shape != "b":
            out.write("INSERT INTO transactions (id, kind, created_at, metadata, reversal_of, fingerprint, hold_id) VALUES "
                      + transaction_rows(lambda i: "") + ";\n")
        entries, changes = [], []
        for i in items:
            for index, (account, amount) in enumerate(((i["from"], -i["amount"]), (i["to"], i["amount"]))):
                version += 1
                entries.append(f"({quote(account)},{version},{quote(i['id'])},{index},'BENCH',{amount},{10**9 + amount},{created},{created})")
                changes.append((account, amount, version))
        out.write("INSERT INTO entries (account_id, account_version, transaction_id, entry_index, asset, amount,"
                  " balance_after, created_at, created_at_running_max) VALUES " + ",".join(entries) + ";\n")
        out.write("UPDATE accounts SET balance = CASE id "
                  + " ".join(f"WHEN {quote(a)} THEN balance + {m}" for a, m, v in changes)
                  + " END, version = CASE id " + " ".join(f"WHEN {quote(a)} THEN {v}" for a, m, v in changes)
                  + f" END, entries_running_max = COALESCE({created}, entries_running_max) WHERE id IN ({id_list});\n")
        if shape in ("a", "c"):
            replaceable = "state = 'pending' OR expires_at <= VALUES(created_at)"
            out.write(key_columns + final_records + " ON DUPLICATE KEY UPDATE"
                      + "".join(f" {column} = IF({replaceable}, VALUES({column}), {column}),"
                                for column in ("fingerprint", "transaction_id", "created_at", "expires_at"))
                      + " state = 'committed';\n")
        out.write("INSERT INTO outbox_events (transaction_id, type, payload, created_at) VALUES " + ",".join(
            f"({quote(i['id'])},'transaction.posted','{{\"id\":\"{i['id']}\",\"kind\":\"transfer\",\"entries\":"
            f"[{{\"account\":\"{i['from']}\",\"amount\":\"-{i['amount']}\"}},{{\"account\":\"{i['to']}\","
            f"\"amount\":\"{i['amount']}\"}}],\"metadata\":{{}}}}',{created})" for i in items) + ";\n")
        out.write("COMMIT;\n")


if __name__ == "__main__":
    main()
