import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';

/**
 * What the cabinet keeps of a member, gone with them: their sessions, sign-in and set-password
 * links, recovery codes and second-factor challenges. Handed to store/members.ts removeMember,
 * which runs it in the removal's transaction (the cabinet owns these tables; the store sits
 * below it and cannot name them).
 */
export async function forgetMemberIn(trx: Kysely<Database>, memberId: number): Promise<void> {
  await trx.deleteFrom('cabinet_sessions').where('member_id', '=', memberId).execute();
  await trx.deleteFrom('cabinet_login_links').where('member_id', '=', memberId).execute();
  await trx.deleteFrom('cabinet_recovery_codes').where('member_id', '=', memberId).execute();
  await trx.deleteFrom('cabinet_sign_in_challenges').where('member_id', '=', memberId).execute();
}
