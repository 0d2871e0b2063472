/**
 * The shared store's migration for capture leases: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * A row per target secret id a running capture of the tenant will write
 * (`pg_capture_leases.ts`; the rule is `capture_lease_store.ts`'s), shared by every runtime
 * of the tenant, on the database's clock. A lease is known by the SHA-256 of a token only its
 * holder has (`live_key`), so a renewal or a release reaches its own rows and nobody else's.
 * The runtime's group has no privilege on the table at all: three SECURITY DEFINER functions
 * take, renew and release the rows of the transaction's tenant (`app_tenant()`, which honours
 * a bound login). No table-wide UPDATE or DELETE grant, so no `LOCK TABLE` against every
 * tenant either, and a TTL bounded to 1 s to 10 min, so no lease outlives its holder by more.
 *
 * @module
 */

import { TENANT_UNSET_GUARD } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const CAPTURE_LEASES_MIGRATION = `
  CREATE TABLE capture_leases (
    tenant_id text NOT NULL REFERENCES tenants(id),
    target text NOT NULL CHECK (target ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    holder_key text NOT NULL CHECK (holder_key ~ '^[0-9a-f]{64}$'),
    holder text NOT NULL CHECK (length(holder) BETWEEN 1 AND 200),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, target)
  );
  CREATE INDEX capture_leases_holder ON capture_leases (tenant_id, holder_key);
  SELECT tenant_rls('capture_leases', 'tenant_id');

  -- A requested TTL, bounded: at least a second, at most ten minutes.
  CREATE FUNCTION capture_lease_ttl(ttl_ms bigint) RETURNS interval LANGUAGE sql IMMUTABLE AS $f$
    SELECT least(greatest(coalesce(ttl_ms, 0), 1000), 600000) * interval '1 millisecond'
  $f$;

  -- Takes a row per target (1 to 16 of them) for the lease whose token is secret, in one
  -- statement: each new, or taken over in place from a lease that expired. If any target is
  -- held by an unexpired lease, nothing is taken and one such row is answered. Rows are
  -- taken in the targets' order, so two overlapping takes wait on each other, never deadlock.
  CREATE FUNCTION capture_lease_take(lease_targets text[], secret text, lease_holder text,
    ttl_ms bigint)
    RETURNS TABLE (taken boolean, busy_target text, busy_holder text, busy_until timestamptz)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  #variable_conflict use_column
  DECLARE
    t text := public.app_tenant();
    wanted text[];
    n integer;
  BEGIN
${TENANT_UNSET_GUARD}
    SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') INTO wanted
      FROM unnest(lease_targets) x;
    IF cardinality(wanted) NOT BETWEEN 1 AND 16 OR array_position(wanted, NULL) IS NOT NULL THEN
      RAISE EXCEPTION 'CAPTURE_LEASE_INVALID: a lease takes 1 to 16 targets'
        USING ERRCODE = 'check_violation';
    END IF;
    BEGIN
      WITH got AS (
        INSERT INTO public.capture_leases AS l (tenant_id, target, holder_key, holder, expires_at)
          SELECT t, x, public.live_key(secret), lease_holder,
            now() + public.capture_lease_ttl(ttl_ms)
          FROM unnest(wanted) WITH ORDINALITY AS u (x, i) ORDER BY i
        ON CONFLICT (tenant_id, target) DO UPDATE
          SET holder_key = excluded.holder_key, holder = excluded.holder,
            expires_at = excluded.expires_at
          WHERE l.expires_at <= now()
        RETURNING 1)
      SELECT count(*) INTO n FROM got;
      IF n <> cardinality(wanted) THEN
        -- Undoes the rows this take wrote (the block is a subtransaction).
        RAISE EXCEPTION 'busy' USING ERRCODE = 'lock_not_available';
      END IF;
    EXCEPTION WHEN lock_not_available THEN
      RETURN QUERY SELECT false, l.target, l.holder, l.expires_at FROM public.capture_leases l
        WHERE l.tenant_id = t AND l.target = ANY (wanted) AND l.expires_at > now()
        ORDER BY l.target LIMIT 1;
      IF NOT FOUND THEN
        RETURN QUERY SELECT false, NULL::text, NULL::text, NULL::timestamptz;
      END IF;
      RETURN;
    END;
    RETURN QUERY SELECT true, NULL::text, NULL::text, now() + public.capture_lease_ttl(ttl_ms);
  END $f$;

  -- Moves the expiry of the lease's unexpired rows in the tenant; how many.
  CREATE FUNCTION capture_lease_renew(secret text, ttl_ms bigint) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH kept AS (UPDATE public.capture_leases
        SET expires_at = now() + public.capture_lease_ttl(ttl_ms)
        WHERE tenant_id = public.app_tenant() AND holder_key = public.live_key(secret)
          AND expires_at > now()
        RETURNING 1)
      SELECT count(*)::integer FROM kept
    $f$;

  -- Removes the lease's rows in the tenant; how many.
  CREATE FUNCTION capture_lease_release(secret text) RETURNS integer
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
      WITH gone AS (DELETE FROM public.capture_leases
        WHERE tenant_id = public.app_tenant() AND holder_key = public.live_key(secret)
        RETURNING 1)
      SELECT count(*)::integer FROM gone
    $f$;

  REVOKE ALL ON capture_leases FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION capture_lease_take(text[], text, text, bigint),
    capture_lease_renew(text, bigint), capture_lease_release(text) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION capture_lease_take(text[], text, text, bigint),
    capture_lease_renew(text, bigint), capture_lease_release(text) TO omotai_runtime;
`;
