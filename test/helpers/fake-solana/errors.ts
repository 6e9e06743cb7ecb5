/**
 * litesvm's error objects turned into what agave puts in `meta.err` (serde's JSON of
 * TransactionError) and into a preflight failure's message (its Display).
 */
const TX_ERRORS = ['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'ProgramAccountNotFound', 'InsufficientFundsForFee',
  'InvalidAccountForFee', 'AlreadyProcessed', 'BlockhashNotFound', 'CallChainTooDeep', 'MissingSignatureForFee', 'InvalidAccountIndex',
  'SignatureFailure', 'InvalidProgramForExecution', 'SanitizeFailure', 'ClusterMaintenance', 'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit', 'UnsupportedVersion', 'InvalidWritableAccount', 'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit', 'TooManyAccountLocks', 'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData', 'InvalidAddressLookupTableIndex', 'InvalidRentPayingAccount', 'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit', 'MaxLoadedAccountsDataSizeExceeded', 'ResanitizationNeeded', 'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction', 'ProgramCacheHitMaxLimit', 'CommitCancelled'];

const IX_ERRORS = ['GenericError', 'InvalidArgument', 'InvalidInstructionData', 'InvalidAccountData', 'AccountDataTooSmall',
  'InsufficientFunds', 'IncorrectProgramId', 'MissingRequiredSignature', 'AccountAlreadyInitialized', 'UninitializedAccount',
  'UnbalancedInstruction', 'ModifiedProgramId', 'ExternalAccountLamportSpend', 'ExternalAccountDataModified', 'ReadonlyLamportChange',
  'ReadonlyDataModified', 'DuplicateAccountIndex', 'ExecutableModified', 'RentEpochModified', 'NotEnoughAccountKeys',
  'AccountDataSizeChanged', 'AccountNotExecutable', 'AccountBorrowFailed', 'AccountBorrowOutstanding', 'DuplicateAccountOutOfSync',
  'InvalidError', 'ExecutableDataModified', 'ExecutableLamportChange', 'ExecutableAccountNotRentExempt', 'UnsupportedProgramId',
  'CallDepth', 'MissingAccount', 'ReentrancyNotAllowed', 'MaxSeedLengthExceeded', 'InvalidSeeds', 'InvalidRealloc',
  'ComputationalBudgetExceeded', 'PrivilegeEscalation', 'ProgramEnvironmentSetupFailure', 'ProgramFailedToComplete',
  'ProgramFailedToCompile', 'Immutable', 'IncorrectAuthority', 'AccountNotRentExempt', 'InvalidAccountOwner', 'ArithmeticOverflow',
  'UnsupportedSysvar', 'IllegalOwner', 'MaxAccountsDataAllocationsExceeded', 'MaxAccountsExceeded', 'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits', 'BorshIoError'];

/** Errors a leader never puts in a block: the transaction is dropped, no fee is taken. */
const NOT_INCLUDED = new Set(['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'InsufficientFundsForFee', 'InvalidAccountForFee',
  'AlreadyProcessed', 'BlockhashNotFound', 'MissingSignatureForFee', 'SignatureFailure', 'SanitizeFailure', 'UnsupportedVersion',
  'TooManyAccountLocks', 'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex', 'ClusterMaintenance', 'ResanitizationNeeded']);

export type TxErrorJson = string | Record<string, unknown>;

function instructionErrorJson(e: unknown): unknown {
  if (typeof e === 'number') return IX_ERRORS[e] ?? 'GenericError';
  if (e && typeof e === 'object' && 'code' in e) return { Custom: Number((e as { code: number }).code) };
  if (e && typeof e === 'object' && 'msg' in e) return { BorshIoError: String((e as { msg: string }).msg) };
  return 'GenericError';
}

export function txErrorJson(err: unknown): TxErrorJson {
  if (typeof err === 'number') return TX_ERRORS[err] ?? 'SanitizeFailure';
  const o = err as Record<string, unknown> & { err?: () => unknown };
  if (typeof o.err === 'function' && typeof o.index === 'number') return { InstructionError: [o.index, instructionErrorJson(o.err())] };
  if (typeof o.index === 'number') return { DuplicateInstruction: o.index };
  if (typeof o.accountIndex === 'number') {
    const name = o.constructor.name.includes('Restricted') ? 'ProgramExecutionTemporarilyRestricted' : 'InsufficientFundsForRent';
    return { [name]: { account_index: o.accountIndex } };
  }
  return 'SanitizeFailure';
}

export const isIncluded = (err: TxErrorJson) => typeof err !== 'string' || !NOT_INCLUDED.has(err);

const TX_DISPLAY: Record<string, string> = {
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
};

const IX_DISPLAY: Record<string, string> = {
  InsufficientFunds: 'insufficient funds for instruction',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  IncorrectProgramId: 'incorrect program id for instruction',
};

/** agave's Display of a TransactionError, as a preflight failure's message carries it. */
export function txErrorDisplay(err: TxErrorJson): string {
  if (typeof err === 'string') return TX_DISPLAY[err] ?? err.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const [name, value] = Object.entries(err)[0]!;
  if (name === 'InstructionError') {
    const [index, ix] = value as [number, unknown];
    const text = typeof ix === 'string' ? IX_DISPLAY[ix] ?? ix
      : 'Custom' in (ix as object) ? `custom program error: 0x${(ix as { Custom: number }).Custom.toString(16)}` : JSON.stringify(ix);
    return `Error processing Instruction ${index}: ${text}`;
  }
  if (name === 'InsufficientFundsForRent') return `Transaction results in an account (${(value as { account_index: number }).account_index}) with insufficient funds for rent`;
  return name;
}
