/**
 * The shared store's migration for the questions: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * Operator questions (`ask_human`, login push challenges) shared by every runtime of a
 * tenant (runtime/store/pg_decision_store.ts), as approvals are: asked on one runtime,
 * answered on any; every change of state is a conditional update, so exactly one outcome
 * wins, and a trigger lets a question leave `pending` once and change nothing else. The
 * runtime's group may update the outcome's columns only (no table-wide UPDATE, which would
 * also allow `LOCK TABLE`), and may delete nothing. Notifications (`omotai_questions`) carry
 * a question's random id only.
 *
 * @module
 */

import { rowGuard } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const QUESTIONS_MIGRATION = `
  CREATE TABLE questions (
    tenant_id text NOT NULL REFERENCES tenants(id),
    id text NOT NULL,
    runtime text NOT NULL,
    agent text,
    session text,
    question text NOT NULL CHECK (char_length(question) <= 2000),
    answer text CHECK (char_length(answer) <= 2000),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'answered', 'expired', 'withdrawn')),
    answered_at timestamptz,
    answered_by text CHECK (char_length(answered_by) <= 40),
    PRIMARY KEY (tenant_id, id)
  );
  CREATE INDEX questions_pending ON questions (tenant_id, state, created_at);
  SELECT tenant_rls('questions', 'tenant_id');
  -- A question is asked pending; only a pending one changes, once, and only its outcome: an
  -- answer (with who gave it) for 'answered', none for 'expired' or 'withdrawn'. When it left
  -- pending is the database's clock, whatever the update said.
${
  rowGuard({
    fn: "questions_final",
    table: "questions",
    insertTrigger: "questions_asked",
    body: `
    IF TG_OP = 'INSERT' THEN
      IF NEW.state <> 'pending' OR NEW.answer IS NOT NULL OR NEW.answered_at IS NOT NULL
        OR NEW.answered_by IS NOT NULL THEN
        RAISE EXCEPTION 'QUESTION_FINAL: a question is asked pending'
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END IF;
    IF (NEW.tenant_id, NEW.id, NEW.runtime, NEW.agent, NEW.session, NEW.question,
        NEW.created_at, NEW.expires_at)
      IS DISTINCT FROM (OLD.tenant_id, OLD.id, OLD.runtime, OLD.agent, OLD.session,
        OLD.question, OLD.created_at, OLD.expires_at) THEN
      RAISE EXCEPTION 'QUESTION_FINAL: only the outcome of a question changes'
        USING ERRCODE = 'check_violation';
    END IF;
    -- The one move out of a final state: an answer the asking runtime could not audit never
    -- reached its agent, so the board records the question as withdrawn (by
    -- 'audit-unavailable') and keeps no answer nobody acted on.
    IF OLD.state = 'answered' AND NEW.state = 'withdrawn' AND NEW.answer IS NULL
        AND NEW.answered_by = 'audit-unavailable'
        AND NEW.answered_at IS NOT DISTINCT FROM OLD.answered_at THEN
      RETURN NEW;
    END IF;
    IF OLD.state <> 'pending' OR NEW.state = 'pending' THEN
      RAISE EXCEPTION 'QUESTION_FINAL: a finished question cannot change'
        USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.state = 'answered' THEN
      IF NEW.answer IS NULL OR NEW.answered_by IS NULL THEN
        RAISE EXCEPTION 'QUESTION_FINAL: an answer names its text and who gave it'
          USING ERRCODE = 'check_violation';
      END IF;
    ELSIF NEW.answer IS NOT NULL OR NEW.answered_by IS NOT NULL THEN
      RAISE EXCEPTION 'QUESTION_FINAL: an expired or withdrawn question has no answer'
        USING ERRCODE = 'check_violation';
    END IF;
    NEW.answered_at := now();`,
  })
}
  REVOKE ALL ON questions FROM PUBLIC;
  -- The outcome's columns only: no table-wide UPDATE (which would also allow LOCK TABLE).
  GRANT SELECT, INSERT ON questions TO omotai_runtime;
  GRANT UPDATE (state, answer, answered_at, answered_by) ON questions TO omotai_runtime;
`;
