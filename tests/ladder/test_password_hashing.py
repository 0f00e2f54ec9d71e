"""Password hashes (docs/participants.md): the site's argon2id parameters, and a hash made with others
remade at the next successful login. The oracle is the PHC string itself (RFC 9106's "low memory"
profile: argon2id, 64 MiB, 3 passes, 4 lanes)."""

from __future__ import annotations

from typing import Any

import pytest
from argon2 import PasswordHasher

from ladder import accounts as acc

pytestmark = pytest.mark.real_argon2  # the site's own hasher, as `parterre web` runs it

PASSWORD = "correct horse battery"
SITE_PARAMETERS = "$argon2id$v=19$m=65536,t=3,p=4$"


def _stored(pool: Any, name: str) -> str:
    with pool.connection() as conn:
        row = conn.execute("SELECT password_hash FROM accounts WHERE username = %s", (name,)).fetchone()
    assert row is not None
    return str(row[0])


def test_a_new_password_is_stored_with_the_sites_parameters_only(pool: Any) -> None:
    acc.create_account(pool, "alice", PASSWORD)
    stored = _stored(pool, "alice")
    assert stored.startswith(SITE_PARAMETERS) and PASSWORD not in stored


def test_a_hash_made_with_older_parameters_is_remade_at_the_next_successful_login(pool: Any) -> None:
    acc.create_account(pool, "bob", PASSWORD)
    old = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD)
    with pool.connection() as conn:
        conn.execute("UPDATE accounts SET password_hash = %s WHERE username = 'bob'", (old,))
    assert acc.authenticate(pool, "bob", "a wrong password") is None
    assert _stored(pool, "bob") == old  # a failed login changes nothing
    account = acc.authenticate(pool, "bob", PASSWORD)
    assert account is not None and account.username == "bob"
    assert _stored(pool, "bob").startswith(SITE_PARAMETERS)
    assert acc.authenticate(pool, "bob", PASSWORD) is not None  # the new hash checks the same password
