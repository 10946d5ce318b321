"""The SDK against a running Engram (started by SdkTest), not a mock.

ENGRAM_URL, ENGRAM_ADMIN (account key), ENGRAM_TOKEN (every memory scope), ENGRAM_KEY (API key
with admin), ENGRAM_LIMITED (a token allowed one request per minute).
"""

import os
import time
import unittest

from engram import Engram, EngramError


def client(name: str, **extra) -> Engram:
    return Engram(os.environ["ENGRAM_URL"], os.environ[name], **extra)


class MemoryTest(unittest.TestCase):
    def test_remember_recall_explain_update_list_forget(self):
        engram = client("ENGRAM_TOKEN")
        memory = engram.memory.remember("Acme's support line opens at eight", subject="Acme", kind="fact")
        self.assertTrue(memory["id"].startswith("mem_"))
        recall = engram.memory.recall("When does Acme's support line open?", limit=3)
        self.assertEqual(recall["memories"][0]["id"], memory["id"])
        self.assertIn("eight", recall["context"])
        edited = engram.memory.update(memory["id"], text="Acme's support line opens at nine")
        self.assertEqual(edited["text"], "Acme's support line opens at nine")
        engram.memory.reinforce(memory["id"], reason="confirmed")
        story = engram.memory.explain(memory["id"])
        self.assertTrue(any(t["action"] == "edit" for t in story["transitions"]))
        self.assertIn(memory["id"], [m["id"] for m in engram.memory.list(page_size=1)])
        self.assertEqual(engram.memory.forget(memory["id"])["state"], "tombstoned")

    def test_an_end_users_memory_is_theirs_alone(self):
        engram = client("ENGRAM_TOKEN")
        ada = engram.memory.for_user("ada@example.com")
        remembered = ada.remember("My favourite Porto cafe is Majestic", session_id="chat-1",
                                  metadata={"topic": "food"})
        self.assertEqual(remembered["userId"], "ada@example.com")
        self.assertEqual(remembered["sessionId"], "chat-1")
        found = ada.recall("favourite Porto cafe", filters={"topic": "food"})
        self.assertEqual(found["memories"][0]["id"], remembered["id"])
        bob = engram.memory.for_user("bob@example.com")
        self.assertNotIn(remembered["id"], [m["id"] for m in bob.recall("favourite Porto cafe")["memories"]])
        with self.assertRaises(EngramError) as failure:
            bob.get(remembered["id"])
        self.assertEqual(failure.exception.status, 404)
        self.assertIn(remembered["id"], [m["id"] for m in ada.list()])

    def test_an_end_user_is_erased_with_a_receipt(self):
        engram = client("ENGRAM_TOKEN")
        carol = engram.memory.for_user("carol@example.com")
        kept = carol.remember("Carol's locker code is 2291")
        erasure = carol.erase(reason="Carol asked to be forgotten")
        self.assertEqual(erasure["status"], "completed")
        self.assertEqual(erasure["receipt"]["memories"]["count"], 1)
        self.assertTrue(erasure["receipt"]["digest"].startswith("sha256:"))
        self.assertEqual(carol.get(kept["id"])["text"], "")
        self.assertNotIn(kept["id"], [m["id"] for m in carol.recall("Carol's locker code")["memories"]])

    def test_a_retried_write_never_stores_twice(self):
        engram = client("ENGRAM_TOKEN")
        key = f"py-{time.time()}"
        first = engram.memory.remember("Madrid closes at seven", idempotency_key=key)
        again = engram.memory.remember("Madrid closes at seven", idempotency_key=key)
        self.assertEqual(first["id"], again["id"])

    def test_a_conversation_is_extracted(self):
        engram = client("ENGRAM_TOKEN")
        answer = engram.memory.extract(
            [{"role": "user", "content": "Our office in Porto opens at nine. Thanks!"}], dry_run=True)
        self.assertEqual([p["text"] for p in answer["proposals"]], ["Our office in Porto opens at nine."])

    def test_typed_errors(self):
        engram = client("ENGRAM_TOKEN")
        with self.assertRaises(EngramError) as raised:
            engram.memory.remember("")
        self.assertEqual(raised.exception.status, 400)
        self.assertEqual(raised.exception.param, "text")
        self.assertTrue(raised.exception.request_id.startswith("req_"))
        with self.assertRaises(EngramError) as missing:
            engram.memory.get("mem_missing")
        self.assertEqual(missing.exception.status, 404)

    def test_a_429_carries_retry_after(self):
        engram = client("ENGRAM_LIMITED", max_retries=0)
        engram.memory.recall("anything")
        with self.assertRaises(EngramError) as limited:
            engram.memory.recall("anything")
        self.assertEqual(limited.exception.status, 429)
        self.assertGreater(limited.exception.retry_after, 0)


class AssistantsAndAdminTest(unittest.TestCase):
    def test_capabilities_with_optimistic_concurrency(self):
        engram = client("ENGRAM_KEY")
        assistant = engram.assistants.create("Py desk")
        current = engram.assistants.capabilities(assistant["_id"])
        changed = engram.assistants.set_capabilities(
            assistant["_id"], ["search_org_knowledge"], version=current["version"])
        self.assertIn("search_org_knowledge", changed["assistant"]["capabilities"])
        with self.assertRaises(EngramError) as stale:
            engram.assistants.set_capabilities(assistant["_id"], [], version=current["version"])
        self.assertEqual(stale.exception.status, 412)

    def test_administration_and_pages(self):
        admin = client("ENGRAM_ADMIN")
        org = admin.admin.create_organization("Py Org", "seed")
        token = admin.admin.create_token(org["id"], "bot", ["memory:read"])
        self.assertTrue(token["token"].startswith("engc_"))
        self.assertIn(token["id"], [t["id"] for t in admin.admin.tokens(org["id"])])
        self.assertIn(org["id"], [o["id"] for o in admin.admin.organizations()])


if __name__ == "__main__":
    unittest.main()
