/**
 * `iterate/errors`: the error table and helpers to read codes from errors that crossed RPC.
 * @module
 */
export { ERROR_CODES, isErrorCode, type ErrorCode, type ErrorDetails, type ErrorDetailsByCode } from "./codes.ts";
export { ItxError, errorCode, errorMessage, hasErrorCode, withErrorCode } from "./itx-error.ts";
