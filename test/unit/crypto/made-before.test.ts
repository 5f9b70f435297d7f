/**
 * Credentials and sealed values made before the crypto toolkit still verify and unseal, in the
 * unit tests' Node (the checks: test/support/made-before.ts; the values:
 * test/fixtures/crypto/made-before-toolkit.json).
 */
import { describeMadeBefore } from "../../support/made-before.ts";

describeMadeBefore("Node");
