"""Engram's Python client: the organization's memory, assistants and administration.

Standard library only. Typed errors (EngramError), retries on 429 and 503 honouring retry_after,
an Idempotency-Key on every memory write, pages as iterators and timeouts. Chat goes through the
official OpenAI client, which Engram serves unchanged (Engram.openai()).
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterator, List, Optional

__all__ = ["Engram", "EngramError"]
__version__ = "0.1.0"


class EngramError(Exception):
    """An error answer of Engram, with the fields of its error body."""

    def __init__(self, status: int, body: Any, request_id: Optional[str]):
        error = body.get("error") if isinstance(body, dict) else None
        detail = error if isinstance(error, dict) else {}
        message = detail.get("message") or (body or {}).get("message") or f"HTTP {status}"
        super().__init__(message)
        self.status = status
        self.type = detail.get("type") or (error if isinstance(error, str) else None)
        self.code = detail.get("code")
        self.param = detail.get("param")
        self.retry_after = detail.get("retry_after") or (body or {}).get("retryAfter")
        self.request_id = request_id


def _backoff(attempt: int) -> float:
    return min(8.0, 0.25 * 2 ** attempt) * (0.5 + random.random() / 2)


def _clean(values: Dict[str, Any]) -> Dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


class Engram:
    """A client for one Engram server and one credential (a context token or an API key)."""

    def __init__(self, base_url: str, api_key: str, timeout: float = 30.0, max_retries: int = 2):
        if not base_url or not api_key:
            raise ValueError("Engram needs a base_url and an api_key")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.memory = Memory(self)
        self.assistants = Assistants(self)
        self.admin = Admin(self)

    def openai(self, **extra: Any) -> Any:
        """The official OpenAI client set up for this Engram (pip install engram-sdk[openai])."""
        from openai import OpenAI

        return OpenAI(base_url=f"{self.base_url}/v1", api_key=self.api_key, **extra)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
    ) -> Any:
        """One request, retried on 429, 503 and connection failures; the parsed JSON answer."""
        url = self.base_url + path
        if query:
            clean = _clean(query)
            if clean:
                url += "?" + urllib.parse.urlencode(clean)
        sent = {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json"}
        sent.update(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["Content-Type"] = "application/json"
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, method=method, headers=sent)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    text = response.read().decode("utf-8")
                    return json.loads(text) if text else None
            except urllib.error.HTTPError as failure:
                text = failure.read().decode("utf-8")
                parsed = json.loads(text) if text else None
                error = EngramError(failure.code, parsed, failure.headers.get("X-Request-Id"))
                if failure.code in (429, 503) and attempt < self.max_retries:
                    wait = error.retry_after or failure.headers.get("Retry-After")
                    time.sleep(float(wait) if wait else _backoff(attempt))
                    attempt += 1
                    continue
                raise error from None
            except urllib.error.URLError:
                if attempt < self.max_retries:
                    time.sleep(_backoff(attempt))
                    attempt += 1
                    continue
                raise

    def paginate(self, path: str, query: Dict[str, Any], param: str, next_field: str) -> Iterator[Any]:
        """Every item of a paged list, page after page, as Engram's cursors lead."""
        return _pages(self.request, path, query, param, next_field)


def _pages(request: Any, path: str, query: Dict[str, Any], param: str, next_field: str) -> Iterator[Any]:
    """The items of a paged list, asking each page through `request`."""
    position = None
    while True:
        page = request("GET", path, query={**query, param: position})
        yield from page["data"]
        position = page.get(next_field)
        if not position:
            return


def _base(agent: Optional[str]) -> str:
    return f"/v1/memory/agents/{urllib.parse.quote(agent, safe='')}" if agent else "/v1/memory"


class _ForUser:
    """The client, with every request sent for one end user (the X-Engram-User header)."""

    def __init__(self, client: Any, user_id: str):
        self._client = client
        self._user_id = user_id

    def request(self, method: str, path: str, body: Any = None, query: Optional[Dict[str, Any]] = None,
                headers: Optional[Dict[str, str]] = None) -> Any:
        return self._client.request(method, path, body, query, {**(headers or {}), "X-Engram-User": self._user_id})

    def paginate(self, path: str, query: Dict[str, Any], param: str, next_field: str) -> Iterator[Any]:
        return _pages(self.request, path, query, param, next_field)


class Memory:
    """The organization's memory (a context access token with memory scopes)."""

    def __init__(self, client: Any):
        self._client = client
        self.events = Events(client)
        self.candidates = Candidates(client)

    def for_user(self, user_id: str) -> "Memory":
        """This memory as one end user of your app sees it: their memories and the shared ones;
        what it remembers is theirs (docs/memory.md, "End users and sessions")."""
        return Memory(_ForUser(self._client, user_id))

    def remember(
        self,
        text: str,
        subject: Optional[str] = None,
        kind: Optional[str] = None,
        confidence: Optional[float] = None,
        metadata: Optional[Dict[str, Any]] = None,
        occurred_at: Optional[str] = None,
        agent: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        session_id: Optional[str] = None,
        expires_at: Optional[str] = None,
        valid_from: Optional[str] = None,
        supersedes: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Remembers one memory; a retried call with the same key never stores twice."""
        body = _clean({
            "text": text,
            "subject": subject,
            "memoryKind": kind,
            "confidence": confidence,
            "metadata": metadata,
            "occurredAt": occurred_at,
            "sessionId": session_id,
            "expiresAt": expires_at,
            "validFrom": valid_from,
            "supersedes": supersedes,
        })
        key = idempotency_key or str(uuid.uuid4())
        return self._client.request("POST", _base(agent), body, headers={"Idempotency-Key": key})

    def recall(self, query: str, limit: Optional[int] = None, agent: Optional[str] = None,
               filters: Optional[Dict[str, Any]] = None, as_of: Optional[str] = None) -> Dict[str, Any]:
        """The memories ranked for a question, and the ready prompt block ("context"); filters on
        metadata ({"team": "legal", "priority": {"gte": 2}}), as_of: what was true then."""
        answer = self._client.request(
            "POST", f"{_base(agent)}/recall",
            _clean({"query": query, "limit": limit, "includeContext": True, "filters": filters, "asOf": as_of}))
        return {"memories": answer["memories"], "context": (answer.get("context") or {}).get("systemBlock", "")}

    def explain(self, memory_id: str, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("GET", f"{_base(agent)}/{memory_id}/provenance")

    def get(self, memory_id: str, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("GET", f"{_base(agent)}/{memory_id}")

    def list(
        self,
        agent: Optional[str] = None,
        state: Optional[str] = None,
        kind: Optional[str] = None,
        subject: Optional[str] = None,
        page_size: Optional[int] = None,
    ) -> Iterator[Dict[str, Any]]:
        """Every memory of the boundary, newest first (state default durable)."""
        query = {"state": state, "memoryKind": kind, "subject": subject, "limit": page_size}
        return self._client.paginate(_base(agent), query, "before", "nextBefore")

    def update(self, memory_id: str, agent: Optional[str] = None, **patch: Any) -> Dict[str, Any]:
        """Edits what a memory says: text, subject, kind, confidence, metadata (None clears)."""
        if "kind" in patch:
            patch["memoryKind"] = patch.pop("kind")
        return self._client.request("PATCH", f"{_base(agent)}/{memory_id}", patch)

    def reinforce(self, memory_id: str, reason: Optional[str] = None, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._control(memory_id, "reinforce", reason, agent)

    def suppress(self, memory_id: str, reason: Optional[str] = None, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._control(memory_id, "suppress", reason, agent)

    def restore(self, memory_id: str, reason: Optional[str] = None, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._control(memory_id, "restore", reason, agent)

    def forget(self, memory_id: str, agent: Optional[str] = None) -> Dict[str, Any]:
        """Forgets a memory: it is never recalled again (kept for provenance)."""
        return self._client.request("DELETE", f"{_base(agent)}/{memory_id}")

    def erase(
        self,
        user_id: Optional[str] = None,
        session_id: Optional[str] = None,
        subject: Optional[str] = None,
        kind: Optional[str] = None,
        filters: Optional[Dict[str, Any]] = None,
        occurred_after: Optional[str] = None,
        occurred_before: Optional[str] = None,
        everything: bool = False,
        reason: Optional[str] = None,
        agent: Optional[str] = None,
        wait: bool = True,
        timeout: float = 120.0,
    ) -> Dict[str, Any]:
        """Erases memories for good (an end user who asks to be forgotten): their text, metadata and
        embeddings everywhere Engram keeps them, and the end user's conversations. Starts the job;
        with wait, returns it once completed, with its receipt (docs/memory.md, "Erasure")."""
        body = _clean({
            "userId": user_id,
            "sessionId": session_id,
            "subject": subject,
            "memoryKind": kind,
            "filters": filters,
            "occurredAfter": occurred_after,
            "occurredBefore": occurred_before,
            "everything": everything or None,
            "reason": reason,
        })
        erasure = self._client.request("POST", f"{_base(agent)}/erase", body)
        deadline = time.monotonic() + timeout
        while wait and erasure["status"] != "completed":
            if time.monotonic() > deadline:
                raise TimeoutError(f"erasure {erasure['id']} still running after {timeout} s")
            time.sleep(0.25)
            erasure = self._client.request("GET", f"{_base(agent)}/erasures/{erasure['id']}")
        return erasure

    def extract(self, messages: List[Dict[str, str]], dry_run: bool = False, agent: Optional[str] = None) -> Dict[str, Any]:
        """Remembers what a conversation says that lasts (dry_run: only proposes)."""
        return self._client.request("POST", f"{_base(agent)}/extract", {"messages": messages, "dryRun": dry_run})

    def _control(self, memory_id: str, action: str, reason: Optional[str], agent: Optional[str]) -> Dict[str, Any]:
        return self._client.request("POST", f"{_base(agent)}/{memory_id}/{action}", _clean({"reason": reason}))


class Events:
    def __init__(self, client: Engram):
        self._client = client

    def ingest(self, event: Dict[str, Any], agent: Optional[str] = None) -> Dict[str, Any]:
        """Feeds a business event to the pipeline; it may stage memory candidates."""
        return self._client.request("POST", f"{_base(agent)}/events", event)

    def list(self, agent: Optional[str] = None, type: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        return self._client.paginate(f"{_base(agent)}/events", {"type": type}, "before", "nextBefore")


class Candidates:
    def __init__(self, client: Engram):
        self._client = client

    def list(self, agent: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """The candidates awaiting review, oldest first."""
        return self._client.paginate(f"{_base(agent)}/candidates", {}, "after", "nextAfter")

    def approve(self, memory_id: str, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("POST", f"{_base(agent)}/{memory_id}/approve", {})

    def reject(self, memory_id: str, agent: Optional[str] = None) -> Dict[str, Any]:
        return self._client.request("POST", f"{_base(agent)}/{memory_id}/reject", {})


class Assistants:
    """Assistants and their capabilities (a session or an API key of the organization)."""

    def __init__(self, client: Engram):
        self._client = client

    def create(self, name: str, type: str = "org_shared") -> Dict[str, Any]:
        return self._client.request("POST", "/api/assistants", {"name": name, "type": type})["assistant"]

    def list(self) -> List[Dict[str, Any]]:
        return self._client.request("GET", "/api/assistants")["assistants"]

    def capabilities(self, assistant_id: str) -> Dict[str, Any]:
        return self._client.request("GET", f"/api/assistants/{assistant_id}/capabilities")

    def set_capabilities(
        self, assistant_id: str, capabilities: List[str], configs: Optional[Dict[str, Any]] = None,
        version: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Replaces the capabilities; with version, only if nobody changed them since (else 412)."""
        headers = {"If-Match": f'"{version}"'} if version is not None else {}
        body = _clean({"capabilities": capabilities, "capabilityConfigs": configs})
        return self._client.request("PATCH", f"/api/assistants/{assistant_id}/capabilities", body, headers=headers)

    def delete(self, assistant_id: str) -> Any:
        return self._client.request("DELETE", f"/api/assistants/{assistant_id}")


class Admin:
    """Organizations, users and credentials (an account key; an admin API key for its own)."""

    def __init__(self, client: Engram):
        self._client = client

    def create_organization(self, name: str, plan: str = "free") -> Dict[str, Any]:
        return self._client.request("POST", "/v1/organizations", {"name": name, "plan": plan})

    def organizations(self) -> Iterator[Dict[str, Any]]:
        after = None
        while True:
            page = self._client.request("GET", "/v1/organizations", query={"after": after})
            yield from page["data"]
            if not page.get("has_more") or not page["data"]:
                return
            after = page["data"][-1]["id"]

    def create_token(self, org_id: str, name: str, scopes: List[str], agents: Optional[List[str]] = None) -> Dict[str, Any]:
        """A context access token; its secret is in the answer's "token", shown once."""
        body = _clean({"name": name, "scopes": scopes, "agents": agents})
        return self._client.request("POST", f"/v1/organizations/{org_id}/tokens", body)

    def tokens(self, org_id: str) -> List[Dict[str, Any]]:
        return self._client.request("GET", f"/v1/organizations/{org_id}/tokens")["data"]

    def revoke_token(self, org_id: str, token_id: str) -> Dict[str, Any]:
        return self._client.request("DELETE", f"/v1/organizations/{org_id}/tokens/{token_id}")

    def create_api_key(self, org_id: str, name: str, permissions: List[str], rate_limit: Optional[int] = None) -> Dict[str, Any]:
        body = _clean({"name": name, "permissions": permissions, "rate_limit": rate_limit})
        return self._client.request("POST", f"/v1/organizations/{org_id}/api-keys", body)
