/**
 * The shared store's migration that has the database place an append's rows in the chain:
 * one numbered step of `PG_MIGRATIONS` (`pg_migrations.ts`), kept in its own file. It replaces
 * the step before it (`pg_migration_audit_append.ts`).
 *
 * `audit_append` used to take rows the runtime had chained from the head it last saw, and to
 * write nothing when another runtime of the tenant had moved the head meanwhile: the runtime
 * then chained again, and again, and then took the lock in a transaction of its own. With
 * several runtimes on one tenant nearly every append missed at least once (each miss a
 * durable commit of its own, since it had locked the head). Now the runtime sends each row's
 * fields and its hash's tail (`rowTail()` in `runtime/store/audit_row.ts`: the JSON array of
 * the fields after `seq`, without its opening bracket), and the database, holding the
 * tenant's head, gives each row its `seq`, its `prev_hash`, and its hash: SHA-256 over
 * `prev_hash || '\n[' || seq || ',' || tail`, the same bytes `rowHash()` hashes. One statement,
 * one commit, whatever the other runtimes do. The runtime checks every hash it is answered
 * against the row it sent, and `omotai audit verify` recomputes every one from the stored
 * fields, as before: a tail that does not match its fields links, and is flagged.
 *
 * The order inside: the tenant is named and must be visible before the rows are looked at
 * (an invisible tenant is `TENANT_UNKNOWN` whatever the rows), the rows are checked before
 * the head is locked, and the lock is held only while the rows are hashed and inserted. The
 * `audit_link` trigger still checks every row's link as it goes in. It runs with the
 * caller's rights: row-level security and the bound logins (`app_tenant()`) apply.
 *
 * A runtime of the previous release calling this function is refused (its rows carry no
 * tail): stop old runtimes before migrating (docs/deploy.md, "Upgrading").
 *
 * @module
 */

/** The SQL of the step (run by the owner, in one transaction). */
export const AUDIT_CHAIN_MIGRATION = `
  DROP FUNCTION audit_append(text, jsonb);
  CREATE FUNCTION audit_append(p_tenant text, p_rows jsonb)
    RETURNS TABLE (seq bigint, prev_hash text, hash text)
    LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $f$
  #variable_conflict use_column
  DECLARE
    h record;
    tails text[];
    seqs bigint[];
    prevs text[];
    hashes text[];
    prev text;
    n integer;
  BEGIN
    PERFORM set_config('app.tenant_id', p_tenant, true);
    IF NOT EXISTS (SELECT 1 FROM public.audit_heads a WHERE a.tenant_id = p_tenant) THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF coalesce(jsonb_typeof(p_rows), 'null') <> 'array' OR jsonb_array_length(p_rows) = 0 THEN
      RAISE EXCEPTION 'AUDIT_ROWS_INVALID: an append is a non-empty array of rows'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT array_agg(CASE WHEN jsonb_typeof(x.e -> 'tail') = 'string' THEN x.e ->> 'tail' END
        ORDER BY x.i)
      INTO tails FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(e, i);
    IF array_position(tails, NULL) IS NOT NULL THEN
      RAISE EXCEPTION 'AUDIT_ROWS_INVALID: every row is an object with its hash''s tail'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    n := cardinality(tails);
    SELECT l.head_seq, l.head_hash INTO h FROM public.audit_lock_head() l;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'TENANT_UNKNOWN: no such tenant' USING ERRCODE = 'foreign_key_violation';
    END IF;
    seqs := array_fill(0::bigint, ARRAY[n]);
    prevs := array_fill(''::text, ARRAY[n]);
    hashes := prevs;
    prev := h.head_hash;
    FOR i IN 1 .. n LOOP
      seqs[i] := h.head_seq + i;
      prevs[i] := prev;
      prev := encode(sha256(convert_to(prev || E'\\n[' || seqs[i]::text || ',' || tails[i],
        'UTF8')), 'hex');
      hashes[i] := prev;
    END LOOP;
    INSERT INTO public.audit_events (tenant_id, seq, ts, session, agent, kind, source, origin,
        method, decision, reason, module, rule, prev_hash, hash)
      SELECT p_tenant, c.s, x.e ->> 'ts', x.e ->> 'session', x.e ->> 'agent', x.e ->> 'kind',
        x.e ->> 'source', x.e ->> 'origin', x.e ->> 'method', x.e ->> 'decision',
        x.e ->> 'reason', x.e ->> 'module', x.e ->> 'rule', c.p, c.h
      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(e, i)
      JOIN unnest(seqs, prevs, hashes) WITH ORDINALITY AS c(s, p, h, i) ON c.i = x.i
      ORDER BY x.i;
    RETURN QUERY SELECT c.s, c.p, c.h FROM unnest(seqs, prevs, hashes) WITH ORDINALITY AS c(s, p, h, i)
      ORDER BY c.i;
  END $f$;
  REVOKE EXECUTE ON FUNCTION audit_append(text, jsonb) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION audit_append(text, jsonb) TO omotai_runtime;
`;
