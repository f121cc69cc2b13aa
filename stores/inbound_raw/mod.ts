/**
 * Received mail as the erase and the inbound processor share it: who may read a message kept whole in
 * `ob_inbound_raw` (its one writer), and the mail still waiting in OB_INBOUND that names an address.
 */
export { keepForReaders, dropReader, type ReaderDropped } from './raw_readers.ts'
export {
  waitingInbound, jobNamesAddressFor, INBOUND_ERASE_SCAN_MAX_JOBS, type WaitingInbound, type DomainOwner
} from './waiting_mail.ts'
