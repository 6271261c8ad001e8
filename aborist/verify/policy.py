"""The verifier's policy: every threshold in one hashed object.

``verifier_policy_hash`` is the ninth cache-key dimension and is recorded in every verdict,
so a replay can tell "same code, different thresholds" from tampering. It is the sha256 of
the RFC 8785 canonical JSON of the policy's fields (:func:`policy_hash`).
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from ledger.canonical import canonical_json, sha256_hex

__all__ = ["DEFAULT_POLICY", "VERIFIER_VERSION", "VerifierPolicy", "policy_hash"]

VERIFIER_VERSION = "aborist-verifier/2.5.1"


class VerifierPolicy(BaseModel):
    """Thresholds of the five strategies, the seven hard checks and the inspect sidecar.

    docs/verifier.md gives the rule each field belongs to, with a worked example.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    span_min_content_tokens: int = Field(default=1, ge=1)
    quote_min_content_tokens: int = Field(default=1, ge=1)
    quote_frame_max_content_tokens: int = Field(default=4, ge=0)
    entity_proximity_chars: int = Field(default=250, ge=1)
    paraphrase_min_tokens: int = Field(default=4, ge=1)
    paraphrase_min_content_tokens: int = Field(default=3, ge=1)
    paraphrase_min_coverage: float = Field(default=0.85, gt=0.0, le=1.0)
    citation_coverage_min: float = Field(default=0.85, gt=0.0, le=1.0)
    max_pointers_per_claim: int = Field(default=3, ge=1)
    allowed_source_roles: tuple[str, ...] = ()
    denied_source_roles: tuple[str, ...] = ("untrusted",)
    partial_paraphrase_min_coverage: float = Field(default=0.5, gt=0.0, le=1.0)
    aside_max_tokens: int = Field(default=12, ge=1)
    trailing_prefix_min_content_tokens: int = Field(default=2, ge=1)
    deflection_min_answer_tokens: int = Field(default=8, ge=1)
    spotlight_window: int = Field(default=400, ge=20)
    support_window_sentences: int = Field(default=1, ge=1, le=5)
    local_min_coverage: float = Field(default=0.85, gt=0.0, le=1.0)
    bare_span_max_tokens: int = Field(default=5, ge=0)
    question_anchor_min: int = Field(default=1, ge=1)
    question_anchor_neighbours: int = Field(default=0, ge=0, le=3)
    question_anchor_distance: int = Field(default=0, ge=0)
    question_anchor_share: float = Field(default=0.0, ge=0.0, le=1.0)
    answer_roles: bool = True
    answer_subject_bridge: int = Field(default=1, ge=0, le=5)
    answer_entity_bridge: bool = True
    answer_rivals: bool = True
    pronoun_antecedents: bool = False
    dateline_dates: bool = True
    date_forms: bool = True
    answer_comparisons: bool = True
    polar_particles: bool = True
    relation_bindings: bool = True
    relation_window: int = Field(default=4, ge=1, le=8)
    relation_frame: int = Field(default=2, ge=1, le=8)
    relation_strict: int = Field(default=0, ge=0, le=8)
    number_units: bool = True
    code_names: bool = True
    answer_directions: bool = True
    answer_type_words: bool = True
    answer_qualifiers: bool = True
    answer_frames: bool = True
    answer_initials: bool = True
    answer_agents: bool = True
    answer_lists: bool = True
    answer_whole_sentences: bool = False
    answer_whole_min_tokens: int = Field(default=4, ge=1)
    answer_restated_question: bool = False
    answer_demonstrative_bridge: bool = True
    question_relation_verbs: bool = True
    answer_fronted_subject: bool = True
    answer_entity_pronoun: bool = True
    answer_first_hop: bool = False
    answer_rival_same_stem: bool = False
    answer_definite_reference: bool = False
    answer_role_clauses: bool = True
    answer_competition: bool = True
    answer_competition_margin: float = Field(default=1.5, ge=1.0)
    answer_title_units: bool = True
    answer_echo: bool = True
    claim_names: bool = False
    answer_bare_paraphrase: bool = True
    claim_item_order: bool = True
    parts_max_gap: int = Field(default=1, ge=0, le=1000)

    def role_allowed(self, role: str) -> bool:
        """Hard check 3: denied roles always fail; a non-empty allow-list is exhaustive."""
        if role in self.denied_source_roles:
            return False
        return not self.allowed_source_roles or role in self.allowed_source_roles


DEFAULT_POLICY = VerifierPolicy()


@lru_cache(maxsize=64)
def policy_hash(policy: VerifierPolicy) -> str:
    """sha256 hex of the canonical JSON of the policy's fields (memoized: the policy is
    frozen, so its hash cannot change)."""
    return sha256_hex(canonical_json(policy.model_dump(mode="json")))
